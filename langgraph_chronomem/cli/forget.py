"""Forgetting: `redact` erases content from every version of a scope, `compact`
erases the versions a retention policy drops.

Unlike every other command they cannot be undone, so `--dry-run` lists what
they would erase first; the commits stay in `log` as an audit skeleton. Both
can take a while on a long history: on a terminal, a bar per phase shows how
far they are.
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta

from rich.text import Text

from langgraph_chronomem.cli import shapes
from langgraph_chronomem.cli._app import Commands, Context, add_scope_option, open_store
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    redact = commands.add_parser(
        "redact",
        parents=[common],
        help="erase content from every version, for good (cannot be undone)",
        description="Erase every version of the matching content from the scope's "
        "history: the log, the change index, the vectors, and (unless "
        "--no-scrub) the database's own leftover copies. Items whose current "
        "value matches are deleted by one redact commit; every other version, "
        "later commit and HEAD stays. Every criterion given must hold. Cannot be "
        "undone: look first with --dry-run.",
    )
    add_scope_option(redact)
    redact.add_argument(
        "--contains",
        metavar="TEXT",
        help="versions whose value holds this text (any string in it, any case)",
    )
    redact.add_argument(
        "--key", metavar="GLOB", help="items whose key matches this glob (contact-*)"
    )
    redact.add_argument(
        "--item",
        metavar="KEY",
        action="append",
        help="this item of the scope's namespace, every version (repeatable)",
    )
    redact.add_argument(
        "--source", help="versions written by commits labelled with this source"
    )
    redact.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be erased; erase nothing",
    )
    redact.add_argument(
        "--no-scrub",
        dest="scrub",
        action="store_false",
        help="leave the database file as it is (no VACUUM)",
    )
    redact.add_argument("--reason", help="why (recorded on the redact commit)")
    redact.add_argument("--author", help="who (recorded on the redact commit)")
    redact.set_defaults(run=run_redact)

    compact = commands.add_parser(
        "compact",
        parents=[common],
        help="erase the versions a retention policy drops (cannot be undone)",
        description="Keep history bounded: per item, keep the first version, HEAD, "
        "the last --keep-last versions and those newer than --keep-within; erase "
        "every other version's value and return the space. HEAD does not change "
        "and every commit stays; as_of and rollback refuse a version that needs "
        "an erased value, naming the oldest one they can use. Every scope unless "
        "--scope.",
    )
    add_scope_option(compact)
    compact.add_argument(
        "--keep-last", metavar="N", type=int, help="keep each item's newest N versions"
    )
    compact.add_argument(
        "--keep-within",
        metavar="AGE",
        type=_age,
        help="keep the versions newer than this: 90d, 12h, 30m",
    )
    compact.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be erased; erase nothing",
    )
    compact.add_argument(
        "--no-vacuum",
        dest="vacuum",
        action="store_false",
        help="leave the file's size as it is (later writes reuse the space)",
    )
    compact.set_defaults(run=run_compact)


_PHASES = {
    "erase": "erasing",
    "vectors": "erasing their vectors",
    "vacuum": "rewriting the database file",
}

_AGE = re.compile(r"^(\d+(?:\.\d+)?)([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def _age(text: str) -> timedelta:
    """`90d`, `12h` or `30m` as a duration."""
    found = _AGE.match(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(
            f"an age is a number and d, h or m (90d, 12h, 30m), not {text!r}"
        )
    return timedelta(**{_UNITS[found[2]]: float(found[1])})


def run_redact(ctx: Context) -> int:
    args = ctx.args
    if not (args.contains or args.key or args.item or args.source):
        raise CliError(
            "name what to redact: --contains, --key, --item or --source", EXIT_USAGE
        )
    with open_store(args) as store, ctx.phases(_PHASES) as told:
        scope = ctx.scope(store)
        done = store.redact(
            scope,
            items=None if args.item is None else [(scope, key) for key in args.item],
            key=args.key,
            contains=args.contains,
            source=args.source,
            dry_run=args.dry_run,
            scrub=args.scrub,
            reason=args.reason,
            author=args.author,
            progress=told,
        )
    code = EXIT_OK if done.versions else EXIT_FAILED
    if ctx.json:
        ctx.emit(
            {"action": "redact", "dry_run": args.dry_run, **shapes.redaction(done)}
        )
        return code
    ctx.out.print(Text(str(done), style="bold"), soft_wrap=True)
    for ns, key, version in done.versions:
        ctx.out.print(f"  {'/'.join((*ns, key))} v{version}", soft_wrap=True)
    if done.reasons:
        listed = ", ".join(f"v{v}" for v in done.reasons)
        ctx.out.print(f"  commit reasons: {listed}", soft_wrap=True)
    if args.scrub and not args.dry_run and not done.scrubbed:
        ctx.out.print(
            "the database file still holds old pages (another connection was "
            "reading): run it again when the store is idle",
            style="yellow",
        )
    return code


def run_compact(ctx: Context) -> int:
    args = ctx.args
    if args.keep_last is None and args.keep_within is None:
        raise CliError(
            "say what to keep: --keep-last, --keep-within or both", EXIT_USAGE
        )
    with open_store(args) as store, ctx.phases(_PHASES) as told:
        scope = None if args.scope is None and store.scope_depth else ctx.scope(store)
        done = store.compact(
            scope,
            keep_last=args.keep_last,
            keep_within=args.keep_within,
            dry_run=args.dry_run,
            vacuum=args.vacuum,
            progress=told,
        )
    if ctx.json:
        ctx.emit({"action": "compact", **shapes.compaction(done)})
        return EXIT_OK
    ctx.out.print(Text(str(done), style="bold"))
    for sc, version in [] if args.dry_run else sorted(done.whole_from.items()):
        ctx.out.print(f"  {'/'.join(sc)}: whole from v{version}", soft_wrap=True)
    return EXIT_OK
