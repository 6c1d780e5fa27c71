"""`undo "request"`: find the change a sentence means, show it, ask, then apply.

    chronomem undo "undo the update about my move to NYC" --scope memories/alice

`ChronoStore.resolve` ranks the versions the request may mean (BM25 and dense
search over commit descriptors, fused and reranked); the command prints them,
rehearses the undo (`ChronoStore.apply(..., dry_run=True)`), prints its changes
and asks. On "y", `ChronoStore.apply` applies that same resolution, and applies
nothing if HEAD moved meanwhile. When the two best matches are too close to
call, the command asks which one is meant. `--yes` applies a clear match
without asking (never a guess); `--only-that-change` reverts the matched commit
instead of rolling the whole scope back; `--dry-run` stops after the preview.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
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
    scope_option,
    scope_text,
)
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from langgraph_chronomem.search.resolve import Resolution
    from langgraph_chronomem.undo import UndoMode, UndoResult

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    undo = commands.add_parser(
        "undo",
        parents=[common],
        help="undo a change described in words, after showing what would change",
        description='Find the change REQUEST describes ("undo the update about my move '
        'to NYC", "go back to when I lived in Boston", "redo"), show the candidates '
        "and the changes, and ask before applying. By default the whole scope is "
        "rolled back to before that change, as a new commit.",
    )
    add_scope_option(undo)
    undo.add_argument("request", metavar="REQUEST", help="what to undo, in words")
    undo.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="apply without asking (never guesses between close matches)",
    )
    undo.add_argument(
        "--only-that-change",
        action="store_true",
        help="revert only the matched commit, keeping later changes (revert mode)",
    )
    undo.add_argument(
        "--dry-run",
        action="store_true",
        help="show the candidates and the changes; change nothing",
    )
    undo.add_argument("--author", help="who asked (recorded on the commit)")
    undo.set_defaults(run=run_undo)


def _candidates(resolution: Resolution) -> Table:
    title = f"Candidates ({resolution.reason})" if resolution.reason else "Candidates"
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Restores", justify="right", no_wrap=True)
    table.add_column("Matched", justify="right", no_wrap=True)
    table.add_column("Summary", overflow="fold")
    table.add_column("Score", justify="right", no_wrap=True)
    for rank, c in enumerate(resolution.candidates, start=1):
        score = next(  # the score the resolver decided on
            s
            for s in (c.scores.rerank, c.scores.dense_score, c.scores.rrf)
            if s is not None
        )
        table.add_row(
            str(rank),
            f"v{c.target}",
            f"v{c.commit.version}",
            Text(c.summary),
            f"{score:.3f}" if score else "",
        )
    return table


def _is_plan(preview: UndoResult) -> bool:
    """Whether a dry run found something it would apply."""
    return preview.action is not None and preview.conflict is None


def _json(
    result: UndoResult,
    scope: Sequence[str],
    mode: str,
    *,
    dry_run: bool,
    planned: bool,
    chosen: int | None,
) -> dict[str, Any]:
    return {
        "request": result.resolution.request,
        "scope": list(scope),
        "mode": mode,
        "dry_run": dry_run,
        "applied": result.applied,
        "planned": planned,
        "chosen": chosen,
        "message": result.message,
        "head": result.resolution.head,
        "commit": None if result.commit is None else shapes.commit(result.commit),
        "changes": shapes.changes(result.changes),
        "conflict": shapes.conflict(result.conflict),
        "redo": result.redo,
        "resolution": shapes.resolution(result.resolution),
    }


def _applied(ctx: Context, result: UndoResult, scope: Sequence[str]) -> None:
    assert result.commit is not None
    commit, where = result.commit, scope_text(scope)
    what = (
        f"Rolled back {where} to v{commit.target}"
        if commit.op == "rollback"
        else f"Reverted v{commit.target} of {where}"
    )
    ctx.out.print(Text(f"{what} as v{commit.version}.", style="bold"))
    render.changes(ctx.out, result.changes)
    redo = f"To redo: chronomem rollback {result.redo} {scope_option(scope)}".rstrip()
    ctx.out.print(Text(redo, style="dim"))


def _refused(ctx: Context, result: UndoResult, scope: Sequence[str]) -> None:
    ctx.err.print(Text(f"nothing changed: {result.message}"))
    resolution = result.resolution
    if resolution.candidates and not resolution.decided:
        option = scope_option(scope)
        ctx.err.print(
            Text(
                "hint: apply the one you mean yourself: chronomem rollback RESTORES "
                f"{option} (the whole scope) or chronomem revert MATCHED {option} "
                "(only that change)"
            )
        )


def _plan(preview: UndoResult) -> str:
    """The plan in a few words: `would roll back to v2`."""
    verb = "revert" if preview.action == "revert" else "roll back to"
    return f"would {verb} v{preview.target}"


def _choose(ctx: Context, resolution: Resolution) -> int | None:
    """Which candidate a person means when the resolver could not tell (0-based)."""
    count = len(resolution.candidates)
    answer = ctx.confirm(f"Which one do you mean? [1-{count}, Enter for none]")
    return int(answer) - 1 if answer.isdigit() and 1 <= int(answer) <= count else None


def run_undo(ctx: Context) -> int:
    args = ctx.args
    mode: UndoMode = "revert" if args.only_that_change else "rollback"
    screen = ctx.err if ctx.json else ctx.out  # what a person reads before answering
    asking = not args.yes and not args.dry_run
    choice: int | None = None
    with open_store(args) as store:
        scope = ctx.scope(store)
        resolution = store.resolve(scope, args.request)
        if resolution.candidates and not (ctx.json and not asking):
            screen.print(_candidates(resolution))
        if resolution.candidates and not resolution.decided and asking:
            choice = _choose(ctx, resolution)
        if args.yes and not args.dry_run:
            result = store.apply(scope, resolution, mode=mode, author=args.author)
        elif not resolution.decided and choice is None:
            result = store.apply(scope, resolution, mode=mode, dry_run=True)
        else:
            result = store.apply(
                scope, resolution, choice=choice, mode=mode, dry_run=True
            )
            if asking and _is_plan(result):
                head = resolution.head
                screen.print(
                    Text(
                        f"{_plan(result).capitalize()} (HEAD is v{head}):", style="bold"
                    )
                )
                render.changes(screen, result.changes)
                if ctx.confirm("Apply? [y/N]") in ("y", "yes"):
                    result = store.apply(
                        scope, resolution, choice=choice, mode=mode, author=args.author
                    )
                else:
                    result = replace(result, message="declined", changes=())
    planned = args.dry_run and _is_plan(result)
    rank = None if not result.applied and not planned else (choice or 0) + 1
    if ctx.json:
        ctx.emit(
            _json(
                result, scope, mode, dry_run=args.dry_run, planned=planned, chosen=rank
            )
        )
    elif result.applied:
        _applied(ctx, result, scope)
    elif planned:
        head = resolution.head
        ctx.out.print(
            Text(
                f"Dry run: {_plan(result)} (HEAD is v{head}); nothing changed.",
                style="bold",
            )
        )
        render.changes(ctx.out, result.changes)
    else:
        _refused(ctx, result, scope)
    return EXIT_OK if result.applied or planned else EXIT_FAILED
