"""Items and names for versions: `ls` lists a scope's items, `cat` prints one,
`search` finds them by meaning, at HEAD or at any version (`--at`, for
`search` a date too); `tag` names versions. Only `tag` writes, and no tag
changes a memory."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from langgraph.store.base import BaseStore, Item
from rich.table import Table
from rich.text import Text

from langgraph_chronomem.cli import shapes
from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    add_scope_option,
    open_store,
    parse_scope,
    parse_version,
    scope_text,
    timestamp,
)
from langgraph_chronomem.cli.errors import EXIT_OK, EXIT_USAGE, CliError
from langgraph_chronomem.cli.render import value_text
from langgraph_chronomem.engine.types import Tag
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.store.moments import moment_of, version_at

__all__ = ["items_at", "register"]

_EVERYTHING = 2**62  # a `search` limit no scope reaches
_AT_HELP = "the version to read: 3, v3, HEAD~2 or a tag (default: HEAD)"


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    ls = commands.add_parser(
        "ls",
        parents=[common],
        help="list a scope's items, at HEAD or at a version",
        description="List the items of a scope, at HEAD or as they were at a "
        "version (--at): path, last update, value.",
    )
    add_scope_option(ls)
    ls.add_argument("--at", metavar="VERSION", help=_AT_HELP)
    ls.set_defaults(run=run_ls)

    cat = commands.add_parser(
        "cat",
        parents=[common],
        help="print one item's value as JSON, at HEAD or at a version",
        description="Print one item's value as JSON, at HEAD or as it was at a "
        "version (--at). With --json, its namespace, key, version and times too.",
    )
    cat.add_argument(
        "namespace",
        metavar="NS",
        help="the item's namespace: memories/alice, or a JSON array of labels",
    )
    cat.add_argument("key", metavar="KEY", help="the item's key")
    cat.add_argument("--at", metavar="VERSION", help=_AT_HELP)
    cat.set_defaults(run=run_cat)

    search = commands.add_parser(
        "search",
        parents=[common],
        help="find a scope's items by meaning, at HEAD or at a version or date",
        description="Find the items of a scope nearest in meaning to QUERY, best "
        "first, at HEAD or as they were at a version or a date (--at): path, "
        "score, last update, value. Needs a store made with index=; one without "
        "lists the items unranked, as its search does.",
    )
    add_scope_option(search)
    search.add_argument("query", metavar="QUERY", help="what to look for")
    search.add_argument(
        "--at",
        metavar="WHEN",
        help="the version to read (3, v3, HEAD~2, a tag), or an ISO date or time "
        "(2024-03-31, naive means UTC): the scope's version then (default: HEAD)",
    )
    search.add_argument(
        "-n", "--limit", type=int, default=10, help="at most this many items (10)"
    )
    search.set_defaults(run=run_search)

    tag = commands.add_parser(
        "tag",
        parents=[common],
        help="name a version (usable wherever a version is), list or remove tags",
        description="Without NAME, list the scope's tags. With NAME, name VERSION "
        "(default: HEAD) so that it can be given wherever a version is "
        "(chronomem rollback NAME, diff NAME, ls --at NAME). A name starts with a "
        "letter or _, holds letters, digits, _ . -, and is not HEAD or v<number>. "
        "A tag is not a commit: no memory changes.",
    )
    add_scope_option(tag)
    tag.add_argument("name", metavar="NAME", nargs="?", help="the tag's name")
    tag.add_argument(
        "version", metavar="VERSION", nargs="?", help="the version (default: HEAD)"
    )
    tag.add_argument(
        "-f", "--force", action="store_true", help="move a tag naming another version"
    )
    tag.add_argument("-d", "--delete", action="store_true", help="remove the tag NAME")
    tag.set_defaults(run=run_tag)


def items_at(
    store: ChronoStore, scope: Sequence[str], version: int | None
) -> list[Item]:
    """Every item of `scope` at `version` (HEAD: `None`), by path; reading
    them restarts no TTL clock."""
    reader: BaseStore = store if version is None else store.as_of(scope, version)
    found = reader.search(tuple(scope), limit=_EVERYTHING, refresh_ttl=False)
    return sorted(found, key=lambda item: (item.namespace, item.key))


def run_ls(ctx: Context) -> int:
    with open_store(ctx.args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        at = None if ctx.args.at is None else parse_version(ctx.args.at, store, scope)
        found = items_at(store, scope, at)
    version = head if at is None else at
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "version": version,
                "head": head,
                "items": [shapes.item(i) for i in found],
            }
        )
        return EXIT_OK
    where = _where(scope, version, head)
    if not found:
        ctx.out.print(Text(f"{where}: no items"))
        return EXIT_OK
    table = Table(title=where, title_justify="left")
    table.add_column("Item")
    table.add_column("Updated (UTC)", no_wrap=True)
    table.add_column("Value", overflow="fold")
    for item in found:
        table.add_row(
            Text(_path(item, scope)),
            Text(timestamp(item.updated_at)),
            Text(value_text(item.value)),
        )
    ctx.out.print(table)
    return EXIT_OK


def run_cat(ctx: Context) -> int:
    namespace = parse_scope(ctx.args.namespace)
    key = ctx.args.key
    with open_store(ctx.args) as store:
        scope = namespace[: store.scope_depth]
        head = store.head(scope)
        at = None if ctx.args.at is None else parse_version(ctx.args.at, store, scope)
        reader: BaseStore = store if at is None else store.as_of(scope, at)
        item = reader.get(namespace, key, refresh_ttl=False)
        if item is None:
            raise ctx.unknown_key(store, namespace, key, at)
    if ctx.json:
        ctx.emit({"version": head if at is None else at, **shapes.item(item)})
        return EXIT_OK
    ctx.out.print(
        Text(json.dumps(item.value, ensure_ascii=False, indent=2)), soft_wrap=True
    )
    return EXIT_OK


def parse_at(text: str, store: ChronoStore, scope: Sequence[str]) -> int:
    """`--at` of `search`: a version as `parse_version` reads it, or an ISO
    date or time, the scope's version then.

    Raises:
        CliError: If the text is none of these (exit 2).
    """
    moment = moment_of(text)
    if moment is None:
        return parse_version(text, store, scope)
    return version_at(store, scope, moment)


def run_search(ctx: Context) -> int:
    args = ctx.args
    if args.limit < 1:
        raise CliError("--limit is at least 1", EXIT_USAGE)
    with open_store(args) as store:
        scope = ctx.scope(store)
        head = store.head(scope)
        at = None if args.at is None else parse_at(args.at, store, scope)
        reader: BaseStore = store if at is None else store.as_of(scope, at)
        found = reader.search(
            tuple(scope), query=args.query, limit=args.limit, refresh_ttl=False
        )
    version = head if at is None else at
    if ctx.json:
        ctx.emit(
            {
                "scope": list(scope),
                "version": version,
                "head": head,
                "query": args.query,
                "items": [{**shapes.item(i), "score": i.score} for i in found],
            }
        )
        return EXIT_OK
    where = _where(scope, version, head)
    if not found:
        ctx.out.print(Text(f"{where}: no items"))
        return EXIT_OK
    table = Table(title=f"{where}: {args.query}", title_justify="left")
    table.add_column("Item")
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Updated (UTC)", no_wrap=True)
    table.add_column("Value", overflow="fold")
    for item in found:
        table.add_row(
            Text(_path(item, scope)),
            Text("" if item.score is None else f"{item.score:.3f}"),
            Text(timestamp(item.updated_at)),
            Text(value_text(item.value)),
        )
    ctx.out.print(table)
    return EXIT_OK


def _where(scope: Sequence[str], version: int, head: int) -> str:
    return f"{scope_text(scope)} at v{version}" + (" (HEAD)" if version == head else "")


def _path(item: Item, scope: Sequence[str]) -> str:
    return "/".join((*item.namespace[len(scope) :], item.key))


def run_tag(ctx: Context) -> int:
    args = ctx.args
    name, version_text = args.name, args.version
    if name is None and (args.delete or args.force):
        raise CliError("give the tag's NAME", EXIT_USAGE)
    if args.delete and (args.force or version_text):
        raise CliError("--delete takes only NAME", EXIT_USAGE)
    with open_store(args) as store:
        scope = ctx.scope(store)
        if name is None:
            return _list(ctx, scope, store.tags(scope))
        if args.delete:
            tag, action = store.untag(scope, name), "untag"
            said = f"removed tag {tag.name} (was v{tag.version})"
        else:
            version = (
                None
                if version_text is None
                else parse_version(version_text, store, scope)
            )
            tag, action = store.tag(scope, name, version, force=args.force), "tag"
            said = f"tagged v{tag.version} of {scope_text(scope)} as {tag.name}"
    if ctx.json:
        ctx.emit({"action": action, "tag": shapes.tag(tag)})
    else:
        ctx.out.print(Text(said))
    return EXIT_OK


def _list(ctx: Context, scope: Sequence[str], tags: Sequence[Tag]) -> int:
    if ctx.json:
        ctx.emit({"scope": list(scope), "tags": [shapes.tag(t) for t in tags]})
        return EXIT_OK
    if not tags:
        ctx.out.print(Text(f"{scope_text(scope)} has no tags"))
        return EXIT_OK
    table = Table(title=f"Tags of {scope_text(scope)}", title_justify="left")
    table.add_column("Tag")
    table.add_column("Version", justify="right", no_wrap=True)
    table.add_column("Tagged (UTC)", no_wrap=True)
    for t in tags:
        version = Text(f"v{t.version}")
        if t.destroyed:
            version = Text(f"v{t.version} (destroyed by a reset)", style="red")
        table.add_row(Text(t.name), version, Text(timestamp(t.created_at)))
    ctx.out.print(table)
    return EXIT_OK
