"""Looking after a store: `reindex` rebuilds derived indexes, `stats` sizes it up."""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    iso,
    open_store,
    scope_text,
    shown_location,
    store_location,
    store_path,
    timestamp,
)
from langgraph_chronomem.cli.errors import EXIT_OK
from langgraph_chronomem.store.opening import DATABASE_FILE, is_conn_string

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    reindex = commands.add_parser(
        "reindex",
        parents=[common],
        help="rebuild the full-text index and the Chroma collections from the log",
        description="Rebuild every derived index (the full-text index of item "
        "changes, the Chroma collections) from the log, the source of truth. "
        "Loads the embedding model.",
    )
    reindex.set_defaults(run=run_reindex)

    stats = commands.add_parser(
        "stats",
        parents=[common],
        help="commits, scopes, items at HEAD, sizes, projection marks",
        description="How big the store is, and how far each derived index has read "
        "the log.",
    )
    add_scope_option(stats)
    stats.set_defaults(run=run_stats)


def run_reindex(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        started = time.perf_counter()
        with ctx.progress() as progress:
            task = progress.add_task("embedding changes", total=None)
            count = store.reindex(
                lambda done, total: progress.update(task, completed=done, total=total)
            )
    seconds = time.perf_counter() - started
    if ctx.json:
        ctx.emit({"commits": count, "seconds": round(seconds, 3)})
    else:
        ctx.out.print(
            f"Reindexed {count} commit{'s' if count != 1 else ''} in {seconds:.1f} s."
        )
    return EXIT_OK


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def _files(ctx: Context) -> dict[str, int] | None:
    """The sizes of the store's files; `None` for a store on PostgreSQL, whose
    files are the server's."""
    if is_conn_string(store_location(ctx.args)):
        return None
    path = store_path(ctx.args)
    files = {
        "database": _size(path / DATABASE_FILE),
        "wal": _size(path / f"{DATABASE_FILE}-wal"),
        "chroma": _size(path / "chroma"),
    }
    files["total"] = sum(files.values())
    return files


def run_stats(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        depth = store.scope_depth
        wanted = ctx.scope(store) if getattr(ctx.args, "scope", None) else None
        stats = store.stats()
    scopes = [
        {**dataclasses.asdict(s), "scope": list(s.scope)}
        for s in stats.scopes
        if wanted is None or s.scope == wanted
    ]
    data = {
        "path": shown_location(ctx.args),
        "scope_depth": depth,
        "totals": {
            "scopes": len(scopes),
            "commits": sum(s["commits"] for s in scopes),
            "items": sum(s["items"] for s in scopes),
            "item_versions": sum(s["item_versions"] for s in scopes),
            "last_seq": stats.last_seq,
        },
        "files": _files(ctx),
        "scopes": [{**s, "last_commit_at": iso(s["last_commit_at"])} for s in scopes],
        "projections": [
            {**dataclasses.asdict(p), "rebuild": [list(r) for r in p.rebuild]}
            for p in stats.projections
        ],
    }
    if ctx.json:
        ctx.emit(data)
        return EXIT_OK
    _print_stats(ctx, data, scopes)
    return EXIT_OK


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError


def _print_stats(
    ctx: Context, data: dict[str, Any], scopes: Sequence[dict[str, Any]]
) -> None:
    totals, files = data["totals"], data["files"]
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row("Store", Text(data["path"]))
    summary.add_row("Scope depth", str(data["scope_depth"]))
    summary.add_row("Scopes", str(totals["scopes"]))
    summary.add_row("Commits", f"{totals['commits']} (last seq {totals['last_seq']})")
    summary.add_row("Items at HEAD", str(totals["items"]))
    summary.add_row("Item versions", str(totals["item_versions"]))
    if files is not None:
        summary.add_row(
            "Size",
            f"{_bytes(files['total'])} (database {_bytes(files['database'])}, "
            f"WAL {_bytes(files['wal'])}, chroma {_bytes(files['chroma'])})",
        )
    ctx.out.print(summary)
    table = Table(title="Scopes", title_justify="left")
    table.add_column("Scope")
    table.add_column("HEAD", justify="right")
    table.add_column("Items", justify="right")
    table.add_column("Last commit (UTC)", no_wrap=True)
    for s in scopes:
        table.add_row(
            Text(scope_text(s["scope"])),
            f"v{s['head']}",
            str(s["items"]),
            timestamp(s["last_commit_at"]),
        )
    ctx.out.print(table)
    marks = Table(title="Projections (derived indexes)", title_justify="left")
    marks.add_column("Name")
    marks.add_column("Mark (seq)", justify="right")
    marks.add_column("Behind", justify="right")
    marks.add_column("Scopes to rebuild")
    for p in data["projections"]:
        marks.add_row(
            p["name"],
            str(p["seq"]),
            str(p["behind"]),
            ", ".join(scope_text(s) for s in p["rebuild"]) or "-",
        )
    if not data["projections"]:
        marks.add_row("(none yet)", "", "", "")
    ctx.out.print(marks)
