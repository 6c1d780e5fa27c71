"""Going back: `rollback TO` restores a whole scope, `revert VERSION` undoes a commit.

Both write a new commit (nothing is lost), and both take `--dry-run`, which
prints the changes the command would make and makes none. The plans come from
the read-only API (`diff`, `show`, `history`), so a dry run cannot write.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from langgraph_chronomem import Change, Commit, Conflict, RevertConflict, VersionError
from langgraph_chronomem.cli import render, shapes
from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    open_store,
    parse_version,
    scope_option,
    scope_text,
)
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from langgraph_chronomem.store import ChronoStore

__all__ = ["plan_revert", "plan_rollback", "register", "report"]


def plan_rollback(store: ChronoStore, scope: Sequence[str], to: int) -> list[Change]:
    """What `rollback(scope, to)` would change at HEAD (old = HEAD, new = at `to`).

    Raises:
        VersionNotFound: If `to` is not a version of the scope.
        VersionError: If `to` is HEAD (the store's own rule).
    """
    head = store.head(scope)
    changes = store.diff(scope, head, to)
    if to == head:
        raise VersionError(f"v{to} is already HEAD; there is nothing to roll back")
    return changes


def plan_revert(
    store: ChronoStore, scope: Sequence[str], version: int
) -> list[Change] | RevertConflict:
    """What `revert(scope, version)` would change, or the conflict that stops it.

    Raises:
        VersionNotFound: If the scope has no such version.
        VersionError: If that commit changed nothing (the store's own rule).
    """
    commit = store.show(scope, version)
    conflicts = []
    for c in commit.changes:
        later = tuple(
            sorted(
                v.version
                for v in store.history(c.namespace, c.key)
                if v.version > version
            )
        )
        if later:
            conflicts.append(Conflict(c.namespace, c.key, later))
    if conflicts:
        return RevertConflict(tuple(scope), version, tuple(conflicts))
    if not commit.changes:
        raise VersionError(f"v{version} changed nothing; there is nothing to revert")
    return [Change(c.namespace, c.key, c.new, c.old) for c in commit.changes]


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
        help="undo one commit's changes, keeping later ones",
        description="Undo one commit's changes as a new commit, keeping every later, "
        "unrelated change. If a later commit changed the same item, nothing is "
        "applied and the conflict is reported (exit 1).",
    )
    add_scope_option(revert)
    revert.add_argument("version", metavar="VERSION", help="the commit to undo")
    _write_options(revert)
    revert.set_defaults(run=run_revert)


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
    option = scope_option(scope)
    if conflict is not None:
        ctx.err.print(Text(f"error: {conflict}", style="red"))
        ctx.err.print(
            Text(
                f"hint: roll back instead (chronomem rollback {version - 1} "
                f"{option}".rstrip()
                + "), or revert the later commits first, newest first"
            )
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
        ctx.out.print(
            Text(f"To redo: chronomem rollback {head} {option}".rstrip(), style="dim")
        )
    return EXIT_OK


def run_rollback(ctx: Context) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        to = parse_version(args.to, lambda: head)
        commit = None
        if args.dry_run:
            changes: Sequence[Change] = plan_rollback(store, scope, to)
        else:
            commit = store.rollback(scope, to, reason=args.reason, author=args.author)
            changes = commit.changes
    return report(
        ctx, action="rollback", scope=scope, head=head, version=to,
        dry_run=args.dry_run, commit=commit, changes=changes,
    )  # fmt: skip


def run_revert(ctx: Context) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        version = parse_version(args.version, lambda: head)
        commit, conflict, changes = None, None, []
        if args.dry_run:
            planned = plan_revert(store, scope, version)
            if isinstance(planned, RevertConflict):
                conflict = planned
            else:
                changes = planned
        else:
            outcome = store.revert(
                scope, version, reason=args.reason, author=args.author
            )
            if isinstance(outcome, RevertConflict):
                conflict = outcome
            else:
                commit, changes = outcome, list(outcome.changes)
    return report(
        ctx, action="revert", scope=scope, head=head, version=version,
        dry_run=args.dry_run, commit=commit, changes=changes, conflict=conflict,
    )  # fmt: skip
