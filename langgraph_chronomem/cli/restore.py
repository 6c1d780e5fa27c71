"""Going back: `rollback TO` restores a whole scope, `revert VERSION` undoes a commit,
`revert --source S` (or `--run`, `--thread`, `--node`, `--written-by`) undoes what
one run, thread, node, source or author wrote.

Both write a new commit (nothing is lost), and both take `--dry-run`, which
prints the changes the command would make and makes none: the store makes the
commit in a transaction it rolls back, so the plan is exactly what would apply.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.text import Text

from langgraph_chronomem import Change, Commit, RevertConflict
from langgraph_chronomem.cli import render, shapes
from langgraph_chronomem.cli._app import (
    LABEL_FLAGS,
    Commands,
    Context,
    add_label_options,
    add_scope_option,
    open_store,
    parse_version,
    scope_text,
)
from langgraph_chronomem.cli.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    notice,
)

__all__ = ["redo", "register", "report"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    rollback = commands.add_parser(
        "rollback",
        parents=[common],
        help="restore the whole scope to a version, as a new commit",
        description="Restore the whole scope to its state at version TO, as a new "
        "commit. Nothing is lost: rolling back to the version before this one "
        "redoes it.",
    )
    add_scope_option(rollback)
    rollback.add_argument(
        "to", metavar="TO", help="the version to go back to (0: empty)"
    )
    _write_options(rollback)
    rollback.set_defaults(run=run_rollback)

    revert = commands.add_parser(
        "revert",
        parents=[common],
        help="undo one commit's changes, or what one run or source wrote",
        description="Undo one commit's changes as a new commit, keeping every later, "
        "unrelated change; or, with --run, --thread, --node, --source or "
        "--written-by instead of VERSION, every change of the commits that match, "
        "as one commit. If an item no longer holds what was written (a later "
        "commit changed it to something else), nothing is applied and the "
        "conflict is reported (exit 1): --force reverts it anyway.",
    )
    add_scope_option(revert)
    revert.add_argument(
        "version", metavar="VERSION", nargs="?", help="the commit to undo"
    )
    add_label_options(revert, _MATCH_FLAGS, "instead of VERSION: commits with this")
    revert.add_argument(
        "--force", action="store_true", help="revert items changed since, too"
    )
    _write_options(revert)
    revert.set_defaults(run=run_revert)


# `revert`'s filters: the flag, and `revert_matching`'s argument it sets.
_MATCH_FLAGS = {**LABEL_FLAGS, "written-by": "written_by"}


def _write_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would change; change nothing"
    )
    parser.add_argument("--reason", help="why (recorded on the commit)")
    parser.add_argument("--author", help="who (recorded on the commit)")


def report(
    ctx: Context,
    *,
    action: str,
    scope: Sequence[str],
    head: int,
    version: int,
    dry_run: bool,
    commit: Commit | None,
    changes: Sequence[Change],
    conflict: RevertConflict | None = None,
    extra: dict[str, Any] | None = None,
) -> int:
    """Print the outcome of a rollback or revert (done, planned, or refused)."""
    applied = commit is not None
    if ctx.json:
        ctx.emit(
            {
                "action": action,
                "scope": list(scope),
                "head": head,
                "version": version,
                "dry_run": dry_run,
                "applied": applied,
                "commit": None if commit is None else shapes.commit(commit),
                "changes": shapes.changes(changes),
                "conflict": shapes.conflict(conflict),
                "redo": head if applied else None,
                **(extra or {}),
            }
        )
        return EXIT_FAILED if conflict else EXIT_OK
    where = scope_text(scope)
    if conflict is not None:
        notice("nothing changed", str(conflict))
        notice(
            "hint",
            f"roll back instead ({ctx.command('rollback', str(version - 1))}), "
            "or revert the later commits first, newest first",
        )
        return EXIT_FAILED
    if commit is None:
        what = (
            f"roll back {where} to v{version}"
            if action == "rollback"
            else f"revert v{version} of {where}"
        )
        ctx.out.print(
            Text(
                f"Dry run: would {what} (HEAD is v{head}); nothing changed.",
                style="bold",
            )
        )
    else:
        what = (
            f"Rolled back {where} to v{version}"
            if action == "rollback"
            else f"Reverted v{version} of {where}"
        )
        ctx.out.print(Text(f"{what} as v{commit.version}.", style="bold"))
    render.changes(ctx.out, changes)
    if commit is not None:
        redo(ctx, head)
    return EXIT_OK


def redo(ctx: Context, version: int) -> None:
    """`To redo: chronomem rollback N ...`, on one line whatever the width."""
    ctx.out.print(
        Text(f"To redo: {ctx.command('rollback', str(version))}", style="dim"),
        soft_wrap=True,
    )


def run_rollback(ctx: Context) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        to = parse_version(args.to, store, scope)
        made = store.rollback(
            scope, to, reason=args.reason, author=args.author, dry_run=args.dry_run
        )
        commit = None if args.dry_run else made
        changes: Sequence[Change] = made.changes
    return report(
        ctx, action="rollback", scope=scope, head=head, version=to,
        dry_run=args.dry_run, commit=commit, changes=changes,
    )  # fmt: skip


def run_revert(ctx: Context) -> int:
    args = ctx.args
    filters = {
        label: getattr(args, label)
        for label in _MATCH_FLAGS.values()
        if getattr(args, label) is not None
    }
    if bool(filters) == (args.version is not None):
        raise CliError(
            "give the commit to undo (VERSION), or what to undo (--run, --thread, "
            "--node, --source or --written-by): one of the two",
            EXIT_USAGE,
        )
    if filters:
        return _revert_matching(ctx, filters)
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        version = parse_version(args.version, store, scope)
        commit, conflict, changes = None, None, []
        outcome = store.revert(
            scope, version, reason=args.reason, author=args.author, dry_run=args.dry_run
        )
        if isinstance(outcome, RevertConflict):
            conflict = outcome
        else:
            changes = list(outcome.changes)
            commit = None if args.dry_run else outcome
    return report(
        ctx, action="revert", scope=scope, head=head, version=version,
        dry_run=args.dry_run, commit=commit, changes=changes, conflict=conflict,
    )  # fmt: skip


def _revert_matching(ctx: Context, filters: dict[str, str]) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        outcome = store.revert_matching(
            scope, **filters, force=args.force, dry_run=args.dry_run,
            reason=args.reason, author=args.author,
        )  # fmt: skip
    refused = bool(outcome.conflicts) and not args.force
    if ctx.json:
        ctx.emit(
            {
                "action": "revert",
                "scope": list(scope),
                "head": head,
                "filters": filters,
                "dry_run": args.dry_run,
                "applied": outcome.commit is not None,
                **shapes.matched_revert(outcome),
                "redo": head if outcome.commit is not None else None,
            }
        )
        return EXIT_FAILED if refused else EXIT_OK
    if refused:
        notice("nothing changed", str(outcome))
        notice("hint", "revert them anyway with --force, or look first: --dry-run")
        return EXIT_FAILED
    ctx.out.print(Text(str(outcome), style="bold"), soft_wrap=True)
    render.changes(ctx.out, outcome.changes)
    if outcome.commit is not None:
        redo(ctx, head)
    return EXIT_OK
