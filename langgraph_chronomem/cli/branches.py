"""Branches: `branch create | list | delete | merge | log | diff`.

A branch of a scope starts at a version and holds changes HEAD does not see
until it is merged (one commit, three-way); a conflict applies nothing and is
reported (exit 1) unless `--resolve` or `--force` settles it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from langgraph_chronomem.cli import render, shapes
from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    open_store,
    parse_version,
    scope_text,
    timestamp,
)
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK, notice
from langgraph_chronomem.engine.types import Branch
from langgraph_chronomem.errors import MergeConflictError

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    branch = commands.add_parser(
        "branch",
        parents=[common],
        help="make, list, merge or delete a branch of a scope",
        description="A branch of a scope starts at a version and costs only its "
        "own changes; HEAD sees nothing of it until it is merged, as one commit. "
        "An app writes to it through ChronoStore.on_branch.",
    )
    verbs = branch.add_subparsers(dest="verb", metavar="VERB", required=True)

    create = verbs.add_parser(
        "create",
        parents=[common],
        help="make a branch at a version (default: HEAD)",
        description="Make a branch of the scope at a version (HEAD unless --at "
        "names one): it costs nothing until something is written on it.",
    )
    add_scope_option(create)
    create.add_argument("name", metavar="NAME", help="letters, digits, - and _")
    create.add_argument("--at", metavar="VERSION", help="where it starts")
    create.set_defaults(run=run_create)

    listing = verbs.add_parser(
        "list",
        parents=[common],
        help="the scope's branches",
        description="The scope's branches: where each starts, its head, and the "
        "branch version its last merge took.",
    )
    add_scope_option(listing)
    listing.set_defaults(run=run_list)

    delete = verbs.add_parser(
        "delete",
        parents=[common],
        help="delete a branch and what it holds",
        description="Delete a branch: its rows, commits and vectors go; HEAD "
        "keeps what was merged from it.",
    )
    add_scope_option(delete)
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(run=run_delete)

    merge = verbs.add_parser(
        "merge",
        parents=[common],
        help="merge a branch into HEAD as one commit",
        description="Merge what the branch changed since its fork (or last merge) "
        "into HEAD as one commit, three-way per item and per field of a record. "
        "Conflicts apply nothing (exit 1) unless --resolve or --force settles them.",
    )
    add_scope_option(merge)
    merge.add_argument("name", metavar="NAME")
    merge.add_argument(
        "--resolve",
        choices=("ours", "theirs"),
        help="settle conflicts with the branch's side (ours) or HEAD's (theirs)",
    )
    merge.add_argument(
        "--force", action="store_true", help="the branch wins every conflict"
    )
    merge.add_argument("--reason", help="why (recorded on the commit)")
    merge.add_argument("--author", help="who (recorded on the commit)")
    merge.set_defaults(run=run_merge)

    log = verbs.add_parser(
        "log",
        parents=[common],
        help="the branch's own commits",
        description="The branch's own commits, newest first (those before its "
        "fork are the scope's: chronomem log).",
    )
    add_scope_option(log)
    log.add_argument("name", metavar="NAME")
    log.set_defaults(run=run_log)

    diff = verbs.add_parser(
        "diff",
        parents=[common],
        help="what differs between HEAD and the branch",
        description="What differs between HEAD and the branch's head, item by "
        "item: what a merge would have to bring together.",
    )
    add_scope_option(diff)
    diff.add_argument("name", metavar="NAME")
    diff.set_defaults(run=run_diff)


def run_create(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        at = None if ctx.args.at is None else parse_version(ctx.args.at, store, scope)
        made = store.branch(scope, ctx.args.name, at)
    if ctx.json:
        ctx.emit({"action": "create", "branch": shapes.branch(made)})
    else:
        ctx.out.print(
            Text(f"made branch {made.name} of {scope_text(scope)} at v{made.fork}")
        )
    return EXIT_OK


def run_list(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        found = store.branches(scope)
    if ctx.json:
        ctx.emit({"scope": list(scope), "branches": [shapes.branch(b) for b in found]})
        return EXIT_OK
    _table(ctx, scope, found)
    return EXIT_OK


def _table(ctx: Context, scope: Sequence[str], found: Sequence[Branch]) -> None:
    if not found:
        ctx.out.print(Text(f"{scope_text(scope)} has no branches"))
        return
    table = Table(title=f"Branches of {scope_text(scope)}", title_justify="left")
    for column in ("Branch", "From", "At", "Merged", "Made (UTC)"):
        table.add_column(column, no_wrap=True)
    for b in found:
        table.add_row(
            Text(b.name),
            Text(f"v{b.fork}"),
            Text(f"v{b.head}"),
            Text(f"v{b.merged}" if b.merged > b.fork else "-"),
            Text(timestamp(b.created_at)),
        )
    ctx.out.print(table)


def run_delete(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        store.delete_branch(scope, ctx.args.name)
    if ctx.json:
        ctx.emit({"action": "delete", "scope": list(scope), "name": ctx.args.name})
    else:
        ctx.out.print(Text(f"deleted branch {ctx.args.name} of {scope_text(scope)}"))
    return EXIT_OK


def run_merge(ctx: Context) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        try:
            commit = store.merge(
                scope,
                args.name,
                resolve=args.resolve,
                force=args.force,
                author=args.author,
                reason=args.reason,
            )
        except MergeConflictError as error:
            conflicts = [shapes.merge_conflict(c) for c in error.conflicts]
            if ctx.json:
                ctx.emit({"action": "merge", "applied": False, "conflicts": conflicts})
            else:
                notice("nothing changed", str(error))
            return EXIT_FAILED
    if ctx.json:
        ctx.emit({"action": "merge", "applied": True, "commit": shapes.commit(commit)})
        return EXIT_OK
    ctx.out.print(
        Text(f"Merged {args.name} into {scope_text(scope)} as v{commit.version}")
    )
    render.changes(ctx.out, commit.changes)
    return EXIT_OK


def run_log(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        commits = store.log(scope, branch=ctx.args.name)
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "branch": ctx.args.name,
                "commits": [shapes.commit(c) for c in commits],
            }
        )
        return EXIT_OK
    if not commits:
        ctx.out.print(Text(f"branch {ctx.args.name} has no commits of its own"))
        return EXIT_OK
    title = f"{scope_text(scope)}, branch {ctx.args.name}"
    ctx.out.print(render.commit_table(commits, title=title))
    return EXIT_OK


def run_diff(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        changes = store.diff(scope, branch=ctx.args.name)
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "branch": ctx.args.name,
                "changes": shapes.changes(changes),
            }
        )
        return EXIT_OK
    ctx.out.print(
        Text(f"{scope_text(scope)}: HEAD -> branch {ctx.args.name}", style="bold")
    )
    render.changes(ctx.out, changes)
    return EXIT_OK
