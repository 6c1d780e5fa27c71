"""Human output: rich tables of commits and item versions, and readable diffs.

Every piece of stored text goes through `Text`, never through rich markup, so a
value holding `[bold]` prints as written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from langgraph_chronomem.cli._app import scope_text, timestamp

if TYPE_CHECKING:
    from langgraph_chronomem.engine.types import Change, Commit, ItemVersion, Namespace

__all__ = [
    "changes",
    "commit_header",
    "commit_table",
    "history_table",
    "oneline",
    "value_text",
]

_STYLE = {"created": "green", "deleted": "red", "updated": "yellow"}
_MARK = {"created": "+", "deleted": "-", "updated": "~"}


def value_text(value: Any) -> str:
    """A stored value as compact JSON."""
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


# Labels that say where content came from and how far to trust it: a column
# each in `log` and `history`, shown when any row carries it.
_PROVENANCE = ("source", "trust")


def _provenance(rows: Sequence[Commit] | Sequence[ItemVersion]) -> list[str]:
    """The provenance labels any of these rows carries, in `_PROVENANCE` order."""
    return [name for name in _PROVENANCE if any(name in r.labels for r in rows)]


def commit_table(commits: Sequence[Commit], *, title: str | None = None) -> Table:
    """Version, time, author, op, summary: one row per commit, as `log` shows them;
    and where each came from (its `source` and `trust` labels) when any says."""
    shown = _provenance(commits)
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("Version", justify="right", no_wrap=True)
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Author")
    for name in shown:
        table.add_column(name.capitalize())
    table.add_column("Op", no_wrap=True)
    table.add_column("Summary", overflow="fold")
    for c in commits:
        table.add_row(
            Text(f"v{c.version}"),
            Text(timestamp(c.created_at)),
            Text(c.author or ""),
            *(Text(c.labels.get(name, "")) for name in shown),
            Text(c.op),
            Text(c.summary),
        )
    return table


def oneline(console: Console, commits: Sequence[Commit], scope: Namespace) -> None:
    """`log --oneline`: a line per commit, `v12 2025-06-01 09:30 put summary`,
    the summary's paths relative to the scope. On a terminal a line longer
    than it is cut (`...`); in a pipe it is printed whole."""
    width = max(len(str(c.version)) for c in commits) + 1
    crop = console.is_terminal
    for c in commits:
        inside = tuple(
            replace(change, namespace=change.namespace[len(scope) :])
            for change in c.changes
        )
        summary = replace(c, changes=inside).summary
        line = f"{'v' + str(c.version):<{width}} {timestamp(c.created_at)[:16]} "
        line += f"{c.op:<8} {summary}"
        console.print(
            Text(line, no_wrap=crop, overflow="ellipsis" if crop else None),
            soft_wrap=not crop,
        )


def history_table(versions: Sequence[ItemVersion], *, title: str) -> Table:
    """Version, time, author, op, value: one row per version of one item; and
    where each came from (its commit's `source` and `trust` labels) when any
    says."""
    shown = _provenance(versions)
    table = Table(title=title, title_justify="left")
    table.add_column("Version", justify="right", no_wrap=True)
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Author")
    for name in shown:
        table.add_column(name.capitalize())
    table.add_column("Op", no_wrap=True)
    table.add_column("Value", overflow="fold")
    for v in versions:
        if v.erased:
            value = Text(f"[{v.erased}]", style="dim")
        elif v.deleted:
            value = Text("(deleted)", style="red")
        else:
            value = Text(value_text(v.value))
        table.add_row(
            Text(f"v{v.version}"),
            Text(timestamp(v.committed_at)),
            Text(v.author or ""),
            *(Text(v.labels.get(name, "")) for name in shown),
            Text(v.op),
            value,
        )
    return table


def _field_lines(old: dict[str, Any], new: dict[str, Any]) -> list[Text]:
    lines = []
    for name in [*old, *(k for k in new if k not in old)]:
        if name not in new:
            lines.append(Text(f"    - {name}: {value_text(old[name])}", style="red"))
        elif name not in old:
            lines.append(Text(f"    + {name}: {value_text(new[name])}", style="green"))
        elif old[name] != new[name]:
            lines.append(
                Text(f"    {name}: {value_text(old[name])} -> {value_text(new[name])}")
            )
    return lines or [Text("    (same value)")]


def _shown(value: Any, erased: str | None) -> str:
    """A side of a change: its value, or why it is gone (`[redacted]`)."""
    return f"[{erased}]" if erased else value_text(value)


def changes(console: Console, items: Iterable[Change]) -> None:
    """Print a diff: `+` created, `-` deleted, `~` updated (field by field)."""
    shown = False
    for c in items:
        shown = True
        kind = c.kind
        console.print(Text(f"{_MARK[kind]} {c.path}", style=_STYLE[kind]))
        old, new = _shown(c.old, c.old_erased), _shown(c.new, c.new_erased)
        if kind == "created":
            console.print(Text(f"    {new}", style="green"))
        elif kind == "deleted":
            console.print(Text(f"    was {old}", style="red"))
        elif c.old_erased or c.new_erased:
            console.print(Text(f"    {old} -> {new}", style="yellow"))
        else:
            assert c.old is not None and c.new is not None
            for line in _field_lines(c.old, c.new):
                console.print(line)
    if not shown:
        console.print(Text("(no changes)", style="dim"))


def commit_header(console: Console, c: Commit) -> None:
    """`show`'s header: version, scope, time, author, op, reason, labels, summary."""
    console.print(Text(f"commit v{c.version} of {scope_text(c.scope)}", style="bold"))
    rows = [
        ("Seq", str(c.seq)),
        ("Parent", f"v{c.parent}" if c.parent else "none"),
        ("Time", timestamp(c.created_at) + " UTC"),
        ("Author", c.author or ""),
        ("Op", c.op + (f" (target v{c.target})" if c.target is not None else "")),
    ]
    if c.reason:
        rows.append(("Reason", c.reason))
    if c.labels:
        rows.append(
            ("Labels", ", ".join(f"{k}={v}" for k, v in sorted(c.labels.items())))
        )
    for name, value in rows:
        console.print(Text(f"{name + ':':<8} {value}"))
    console.print()
    console.print(Text(f"    {c.summary}"))
    console.print()
