"""`undo "request"`: find the change a sentence means, show it, ask, then apply.

    chronomem undo "undo the update about my move to NYC" --scope memories/alice
    chronomem undo 3.1 --scope memories/alice --yes

`ChronoStore.resolve` ranks the item changes the request may mean (BM25 and
dense search over each change's values, fused and reranked), each with its
change id (`3.1`: the first item change of v3), its action and what acting on
it would change at HEAD. The command prints them, makes a dry run of the undo
(`ChronoStore.apply(..., dry_run=True)`), prints its changes and asks. On "y",
`ChronoStore.apply` applies that same resolution, and applies nothing if HEAD
moved meanwhile.

By default an undo is surgical: a request that names a change ("forget X")
reverts only the items that change touched, and keeps every later change;
"go back to when X" requests move the whole scope. `--whole-scope` rolls the
whole scope back to before the matched change. When the resolver is not sure,
it decides nothing: the command asks which candidate is meant (by its `#` or
its change id). `--yes` applies without asking, only what the resolver decided
(never a guess); `--dry-run` stops after the preview.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from langgraph_chronomem.cli import render, shapes
from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    open_store,
    scope_text,
)
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK, notice
from langgraph_chronomem.cli.restore import redo
from langgraph_chronomem.engine.describe import describe_change
from langgraph_chronomem.errors import InvalidRequestError

if TYPE_CHECKING:
    from langgraph_chronomem.engine.types import Change, Conflict
    from langgraph_chronomem.search.resolve import Candidate, Mode, Resolution
    from langgraph_chronomem.store.undo import UndoResult

__all__ = ["register"]

_LISTED = 3
"""How many of a candidate's changes the table lists before "and N more"."""


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    undo = commands.add_parser(
        "undo",
        parents=[common],
        help="undo a change described in words, after showing what would change",
        description='Find the change REQUEST describes ("undo the update about my move '
        'to NYC", "go back to when I lived in Boston", "redo") or names by its id '
        '("3.1"), show the candidates and what acting on each would change, and ask '
        "before applying. By default only the matched change is undone (its items "
        'go back to their value before it); "go back to when/before ..." requests, '
        "and --whole-scope, roll the whole scope back instead. Either way the undo "
        "is a new commit.",
    )
    add_scope_option(undo)
    undo.add_argument(
        "request",
        metavar="REQUEST",
        help='what to undo, in words, or a change id from the table ("3.1")',
    )
    undo.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="apply without asking, only when the match is clear (never a guess)",
    )
    undo.add_argument(
        "--whole-scope",
        action="store_true",
        help="roll the whole scope back to before the matched change, later "
        "changes included (rollback mode)",
    )
    undo.add_argument(
        "--dry-run",
        action="store_true",
        help="show the candidates and the changes; change nothing",
    )
    undo.add_argument("--author", help="who asked (recorded on the commit)")
    undo.set_defaults(run=run_undo)


# -- what a person reads --------------------------------------------------------


def _action(c: Candidate) -> str:
    """`revert` (only the matched items) or `roll back to v2` (the whole scope)."""
    return "revert" if c.action == "revert" else f"roll back to v{c.target}"


def _conflict_text(conflicts: Sequence[Conflict], scope: Sequence[str] = ()) -> str:
    """`home changed again in v3`: each item by its path inside `scope`."""
    return "; ".join(
        "/".join((*c.namespace[len(scope) :], c.key))
        + f" changed again in {', '.join(f'v{v}' for v in c.later_versions)}"
        for c in conflicts
    )


def _short(changes: Sequence[Change], scope: Sequence[str]) -> list[str]:
    """Changes in words, each item named by its path inside `scope`."""
    return [
        describe_change(replace(c, namespace=c.namespace[len(scope) :]))
        for c in changes
    ]


def _effect(c: Candidate, scope: Sequence[str]) -> Text:
    """What acting on `c` would change at HEAD, a line per item, conflicts in red."""
    lines = _short(c.diff[:_LISTED], scope)
    if c.changed > _LISTED:
        lines.append(f"and {c.changed - _LISTED} more")
    text = Text("\n".join(lines) if lines else "nothing")
    if c.conflicts:
        text.append(f"\nconflict: {_conflict_text(c.conflicts, scope)}", style="red")
    return text


def _order(resolution: Resolution) -> tuple[str, Callable[[Candidate], float]] | None:
    """The score the rows are in the order of, and its column's name: FlashRank's
    when the rerank ran, else the fused rank of the two searches (RRF). None for a
    candidate found without a search (a change id, "redo", "the last change")."""
    if not any(c.scores.rrf for c in resolution.candidates):
        return None
    if all(c.scores.rerank is not None for c in resolution.candidates):
        return "Rerank", lambda c: c.scores.rerank or 0.0
    return "Fused", lambda c: c.scores.rrf


def _candidates(resolution: Resolution, scope: Sequence[str]) -> Table:
    """One row per candidate, best first; items are named by their path inside
    `scope`. The column after `Acting would` holds the score that orders the rows;
    `Similarity` is the meaning score alone, what the rule to act alone reads."""
    title = f"Candidates ({resolution.reason})" if resolution.reason else "Candidates"
    order = _order(resolution)
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Change", justify="right", no_wrap=True)
    table.add_column("Matched", overflow="fold")
    table.add_column("Action", no_wrap=True)
    table.add_column("Acting would", overflow="fold")
    if order is not None:
        table.add_column(order[0], justify="right", no_wrap=True)
    table.add_column("Similarity", justify="right", no_wrap=True)
    for rank, c in enumerate(resolution.candidates, start=1):
        similarity = c.scores.dense_score
        table.add_row(
            str(rank),
            Text(c.id),
            Text("; ".join(_short(c.changes, scope))),
            Text(_action(c)),
            _effect(c, scope),
            *([] if order is None else [f"{order[1](c):.4f}"]),
            "" if similarity is None else f"{similarity:.3f}",
        )
    return table


def _what(c: Candidate) -> str:
    """`change 3.1` for one item change, `v4` for a whole commit."""
    return f"change {c.id}" if "." in c.id else f"v{c.id}"


def _plan(preview: UndoResult) -> str:
    """The plan in a few words: `would revert change 3.1`, `would roll back to v2`."""
    assert preview.candidate is not None
    if preview.action == "revert":
        return f"would revert {_what(preview.candidate)}"
    return f"would roll back to v{preview.target}"


def _is_plan(preview: UndoResult) -> bool:
    """Whether a dry run found something it would apply."""
    return preview.action is not None and preview.conflict is None


def _applied(ctx: Context, result: UndoResult, scope: Sequence[str]) -> None:
    assert result.commit is not None and result.candidate is not None
    commit, where = result.commit, scope_text(scope)
    what = (
        f"Rolled back {where} to v{commit.target}"
        if commit.op == "rollback"
        else f"Reverted {_what(result.candidate)} of {where}"
    )
    ctx.out.print(Text(f"{what} as v{commit.version}.", style="bold"))
    render.changes(ctx.out, result.changes)
    assert result.redo is not None
    redo(ctx, result.redo)


def _refused(ctx: Context, result: UndoResult) -> None:
    """Why nothing changed, and what to run instead, as notices on stderr."""
    resolution, conflict = result.resolution, result.conflict
    if conflict is not None and result.candidate is not None:
        notice(
            "nothing changed",
            f"cannot revert {_what(result.candidate)}: "
            f"{_conflict_text(conflict.conflicts)}",
        )
        notice(
            "hint",
            "keep it as it is, or roll the whole scope back to before it: "
            + ctx.command("rollback", str(conflict.version - 1)),
        )
        return
    if resolution.candidates and result.candidate is None:  # none decided or chosen
        notice(
            "nothing changed", f"not sure which change you mean ({resolution.reason})"
        )
        if all(c.action == "revert" for c in resolution.candidates):
            hint = "name the one you mean by its change id: " + ctx.command(
                "undo", "ID"
            )
        else:
            hint = (
                "roll back to the one you mean yourself: "
                f"{ctx.command('rollback', 'VERSION')} (the version in its Action)"
            )
        notice("hint", hint)
        return
    notice("nothing changed", result.message)


def _choose(ctx: Context, resolution: Resolution) -> int | None:
    """Which candidate a person means when the resolver could not tell (0-based).

    The answer is a row's `#` or a change id (`3.1`, `v3.1`); Enter means none.

    Raises:
        InvalidRequestError: If the answer names no candidate.
    """
    candidates = resolution.candidates
    count = len(candidates)
    answer = ctx.confirm(
        f"Which one do you mean? [1-{count} or a change id, Enter for none]"
    )
    if not answer or answer in ("n", "no", "none", "cancel"):
        return None
    if answer.isdigit() and 1 <= int(answer) <= count:
        return int(answer) - 1
    ids = [c.id for c in candidates]
    named = answer.removeprefix("change").strip().removeprefix("v")
    if named in ids:
        return ids.index(named)
    raise InvalidRequestError(
        f"there is no candidate {answer!r}: answer 1..{count} or one of the "
        f"change ids {', '.join(ids)}"
    )


# -- what a script reads --------------------------------------------------------


def _json(
    result: UndoResult,
    scope: Sequence[str],
    mode: Mode,
    *,
    dry_run: bool,
    planned: bool,
) -> dict[str, Any]:
    resolution, acted = result.resolution, result.candidate
    rank = None if acted is None else resolution.candidates.index(acted) + 1
    return {
        "request": resolution.request,
        "scope": list(scope),
        "mode": mode,
        "dry_run": dry_run,
        "applied": result.applied,
        "planned": planned,
        "chosen": rank,
        "action": result.action,
        "target": result.target,
        "candidate": None if acted is None else shapes.candidate(rank or 1, acted),
        "message": result.message,
        "head": resolution.head,
        "commit": None if result.commit is None else shapes.commit(result.commit),
        "changes": shapes.changes(result.changes),
        "conflict": shapes.conflict(result.conflict),
        "redo": result.redo,
        "resolution": shapes.resolution(resolution),
    }


# -- the command ----------------------------------------------------------------


def run_undo(ctx: Context) -> int:
    args = ctx.args
    mode: Mode = "rollback" if args.whole_scope else "auto"
    screen = ctx.err if ctx.json else ctx.out  # what a person reads before answering
    asking = not args.yes and not args.dry_run
    choice: int | None = None
    with open_store(args) as store:
        scope = ctx.scope(store)
        resolution = store.resolve(scope, args.request, mode=mode)
        if resolution.candidates and not (ctx.json and not asking):
            screen.print(_candidates(resolution, scope))
        if resolution.candidates and not resolution.decided and asking:
            choice = _choose(ctx, resolution)
        if args.yes and not args.dry_run:
            result = store.apply(scope, resolution, author=args.author)
        else:
            result = store.apply(scope, resolution, choice=choice, dry_run=True)
            if asking and _is_plan(result):
                screen.print(
                    Text(
                        f"{_plan(result).capitalize()} (HEAD is v{resolution.head}):",
                        style="bold",
                    )
                )
                render.changes(screen, result.changes)
                if ctx.confirm("Apply? [y/N]") in ("y", "yes"):
                    result = store.apply(
                        scope, resolution, choice=choice, author=args.author
                    )
                else:
                    result = replace(result, message="declined", changes=())
    planned = args.dry_run and _is_plan(result)
    if ctx.json:
        ctx.emit(_json(result, scope, mode, dry_run=args.dry_run, planned=planned))
    elif result.applied:
        _applied(ctx, result, scope)
    elif planned:
        ctx.out.print(
            Text(
                f"Dry run: {_plan(result)} (HEAD is v{resolution.head}); "
                "nothing changed.",
                style="bold",
            )
        )
        render.changes(ctx.out, result.changes)
    else:
        _refused(ctx, result)
    return EXIT_OK if result.applied or planned else EXIT_FAILED
