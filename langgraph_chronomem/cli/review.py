"""Review: list the proposals waiting in a scope, and approve or reject one.

A proposal is a write held back from memory (`commit_context(review=True)`, or
a source `require_review` named); approving or rejecting it is a commit.
"""

from __future__ import annotations

import argparse

from rich.text import Text

from langgraph_chronomem.cli import shapes
from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    open_store,
    parse_version,
)
from langgraph_chronomem.cli.errors import EXIT_OK, EXIT_USAGE, CliError
from langgraph_chronomem.cli.render import changes, commit_table
from langgraph_chronomem.errors import WriteConflictError

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    review = commands.add_parser(
        "review",
        parents=[common],
        help="list proposals waiting for review; approve or reject one",
        description="Without --approve or --reject, list the scope's pending "
        "proposals: writes held back from memory until someone decides. "
        "--approve V writes what proposal V proposed as one commit; an item "
        "changed since it was proposed refuses, unless --force. --reject V "
        "records the refusal as one commit and changes no memory.",
    )
    add_scope_option(review)
    decision = review.add_mutually_exclusive_group()
    decision.add_argument("--approve", metavar="VERSION", help="approve this proposal")
    decision.add_argument("--reject", metavar="VERSION", help="reject this proposal")
    review.add_argument(
        "--force",
        action="store_true",
        help="with --approve: overwrite items changed since the proposal",
    )
    review.add_argument("--reason", help="why (recorded on the decision's commit)")
    review.add_argument("--author", help="who (recorded on the decision's commit)")
    review.set_defaults(run=run_review)


def run_review(ctx: Context) -> int:
    args = ctx.args
    if args.force and args.approve is None:
        raise CliError("--force goes with --approve", EXIT_USAGE)
    if args.approve is None and args.reject is None:
        return _list(ctx)
    with open_store(args) as store:
        scope = ctx.scope(store)
        version = parse_version(args.approve or args.reject, store, scope)
        if args.approve is not None:
            try:
                done = store.approve(
                    scope, version, force=args.force,
                    reason=args.reason, author=args.author,
                )  # fmt: skip
            except WriteConflictError as error:
                raise CliError(
                    str(error),
                    hint=f"`{ctx.command('review', '--approve', str(version))}"
                    " --force` overwrites those changes",
                ) from error
        else:
            done = store.reject(scope, version, reason=args.reason, author=args.author)
    if ctx.json:
        ctx.emit({"action": done.op, "commit": shapes.commit(done)})
        return EXIT_OK
    ctx.out.print(Text(f"v{done.version} {done.summary}", style="bold"), soft_wrap=True)
    return EXIT_OK


def _list(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        pending = store.proposals(scope)
    if ctx.json:
        ctx.emit(
            {"scope": list(scope), "proposals": [shapes.proposal(c) for c in pending]}
        )
        return EXIT_OK
    if not pending:
        ctx.out.print("no proposals waiting for review")
        return EXIT_OK
    ctx.out.print(commit_table(pending, title="Waiting for review"))
    for commit in pending:
        ctx.out.print(Text(f"v{commit.version}", style="bold"))
        changes(ctx.out, commit.changes)
    return EXIT_OK
