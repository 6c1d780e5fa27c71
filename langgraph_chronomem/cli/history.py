"""Reading the past: `log`, `show`, `diff`, `history`. None of them changes anything."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import get_args

from rich.text import Text

from langgraph_chronomem.cli import render, shapes
from langgraph_chronomem.cli._app import (
    LABEL_FLAGS,
    Commands,
    Context,
    add_label_options,
    add_scope_option,
    open_store,
    parse_scope,
    parse_version,
    scope_text,
)
from langgraph_chronomem.cli.errors import EXIT_OK
from langgraph_chronomem.engine.types import Op

__all__ = ["register"]

OPS = get_args(Op)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time (2025-06-01, 2025-06-01T09:30)"
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0")
    return int(text)


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    log = commands.add_parser(
        "log",
        parents=[common],
        help="list a scope's commits, newest first",
        description="List a scope's commits, newest first: version, time, author, "
        "op, summary.",
    )
    add_scope_option(log)
    log.add_argument(
        "-n", "--limit", type=_count, metavar="N", help="at most N commits"
    )
    log.add_argument(
        "--since",
        type=_moment,
        metavar="WHEN",
        help="commits at or after this ISO time (UTC if no offset)",
    )
    log.add_argument(
        "--until",
        type=_moment,
        metavar="WHEN",
        help="commits at or before this ISO time",
    )
    log.add_argument("--author", help="only this author's commits")
    log.add_argument("--op", choices=OPS, help="only commits of this kind")
    log.add_argument(
        "--oneline",
        action="store_true",
        help="one line per commit: version, time, op and summary, paths relative "
        "to the scope",
    )
    add_label_options(log, LABEL_FLAGS, "only commits with this")
    log.set_defaults(run=run_log)

    show = commands.add_parser(
        "show",
        parents=[common],
        help="one commit: who, when, why, and its changes",
        description="Show one commit and the changes it made.",
    )
    add_scope_option(show)
    show.add_argument("version", metavar="VERSION", help="3, v3, HEAD, HEAD~1 or a tag")
    show.set_defaults(run=run_show)

    diff = commands.add_parser(
        "diff",
        parents=[common],
        help="what differs between two versions of a scope",
        description="What differs between two versions of a scope (0 is the empty "
        "state before the first commit). Old values are at V1, new ones at V2.",
    )
    add_scope_option(diff)
    diff.add_argument(
        "v1", metavar="V1", help="the version to compare from (a number or a tag)"
    )
    diff.add_argument(
        "v2",
        metavar="V2",
        nargs="?",
        default="HEAD",
        help="the version to compare to (default: HEAD)",
    )
    diff.set_defaults(run=run_diff)

    history = commands.add_parser(
        "history",
        parents=[common],
        help="every version of one item, newest first",
        description="Every version of one item, newest first, deletions included.",
    )
    history.add_argument(
        "namespace",
        metavar="NS",
        help="the item's namespace: memories/alice, or a JSON array of labels",
    )
    history.add_argument("key", metavar="KEY", help="the item's key")
    history.set_defaults(run=run_history)


def run_log(ctx: Context) -> int:
    args = ctx.args
    with open_store(args) as store:
        scope = ctx.scope(store)
        commits = store.log(
            scope,
            limit=args.limit,
            since=args.since,
            until=args.until,
            author=args.author,
            op=args.op,
            **{label: getattr(args, label) for label in LABEL_FLAGS.values()},
        )
        head = store.head(scope)
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "head": head,
                "commits": [shapes.commit(c) for c in commits],
            }
        )
        return EXIT_OK
    if not commits:
        ctx.out.print(
            Text(
                f"no commits in {scope_text(scope)} match"
                if head
                else f"{scope_text(scope)} has no commits yet"
            )
        )
        return EXIT_OK
    if args.oneline:
        render.oneline(ctx.out, commits, scope)
        return EXIT_OK
    ctx.out.print(
        render.commit_table(commits, title=f"{scope_text(scope)} (HEAD v{head})")
    )
    return EXIT_OK


def run_show(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        version = parse_version(ctx.args.version, store, scope)
        commit = store.show(scope, version)
    if ctx.json:
        ctx.emit(shapes.commit(commit))
        return EXIT_OK
    render.commit_header(ctx.out, commit)
    render.changes(ctx.out, commit.changes)
    return EXIT_OK


def run_diff(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        v1 = parse_version(ctx.args.v1, store, scope)
        v2 = parse_version(ctx.args.v2, store, scope)
        changes = store.diff(scope, v1, v2)
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "from": v1,
                "to": v2,
                "changes": shapes.changes(changes),
            }
        )
        return EXIT_OK
    ctx.out.print(Text(f"{scope_text(scope)}: v{v1} -> v{v2}", style="bold"))
    render.changes(ctx.out, changes)
    return EXIT_OK


def run_history(ctx: Context) -> int:
    namespace = parse_scope(ctx.args.namespace)
    key = ctx.args.key
    with open_store(ctx.args) as store:
        versions = store.history(namespace, key)
        if not versions:
            raise ctx.unknown_key(store, namespace, key)
    path = "/".join((*namespace, key))
    if ctx.json:
        ctx.emit(
            {
                "namespace": list(namespace),
                "key": key,
                "path": path,
                "versions": [shapes.item_version(v) for v in versions],
            }
        )
        return EXIT_OK
    ctx.out.print(render.history_table(versions, title=path))
    return EXIT_OK
