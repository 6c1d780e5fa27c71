"""Moving a store: `migrate SRC DST` copies it, history and checkpoints included,
to another directory or a PostgreSQL database, then checks the copy.

The work is `langgraph_chronomem.migrate.copy_store` (and `verify_copy` for
`--verify-only`); this module parses, shows progress on stderr and prints.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text

from langgraph_chronomem.cli._app import (
    Commands,
    Context,
    _open_on_postgres,
    shown_location,
)
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError
from langgraph_chronomem.migrate import (
    Difference,
    MigrationReport,
    copy_store,
    verify_copy,
)
from langgraph_chronomem.store.opening import DATABASE_FILE, is_conn_string

__all__ = ["register"]

_COUNTS = (
    "commits",
    "items",
    "checkpoints",
    "copied_commits",
    "copied_checkpoints",
    "resumed",
    "seconds",
)
"""What `--json` says of a copy (`null` each with `--verify-only`)."""
_PHASES = {
    "commits": "copying commits",
    "checkpoints": "copying checkpoints",
    "verify": "checking scopes",
}


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    migrate = commands.add_parser(
        "migrate",
        parents=[common],
        help="copy a store, history and checkpoints, to a directory or PostgreSQL",
        description="Copy the store at SRC (a directory or a postgresql:// URL) to "
        "DST (a new directory or an empty database) with every version, author, "
        "label and time, and the checkpoints; then compare log, history and "
        "as_of on both sides (exit 1 if they differ). Run again after an "
        "interruption, it continues where it stopped. SRC is only read.",
    )
    migrate.add_argument("source", metavar="SRC", help="the store to copy")
    migrate.add_argument("dest", metavar="DST", help="where to copy it")
    migrate.add_argument(
        "--batch-size",
        type=int,
        default=1000,
        metavar="N",
        help="commits per transaction at DST (default: 1000)",
    )
    migrate.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="copy the memory log only, not the checkpoints",
    )
    migrate.add_argument(
        "--verify-only",
        action="store_true",
        help="copy nothing: compare SRC and an earlier copy at DST",
    )
    migrate.set_defaults(run=run_migrate)


def run_migrate(ctx: Context) -> int:
    args = ctx.args
    _check_source(args.source)
    if args.batch_size < 1:
        raise CliError(
            f"--batch-size must be 1 or more, not {args.batch_size}", EXIT_USAGE
        )
    with ctx.phases(_PHASES) as told:
        if args.verify_only:
            report = None
            differences = verify_copy(
                args.source,
                args.dest,
                checkpoints=not args.no_checkpoints,
                progress=told,
            )
        else:
            report = copy_store(
                args.source,
                args.dest,
                batch_size=args.batch_size,
                checkpoints=not args.no_checkpoints,
                progress=told,
            )
            differences = report.differences
    code = EXIT_FAILED if differences else EXIT_OK
    if ctx.json:
        counts = dict.fromkeys(_COUNTS) if report is None else _counts(report)
        ctx.emit(
            {
                "source": _shown(args.source),
                "dest": _shown(args.dest),
                **counts,
                "differences": [dataclasses.asdict(d) for d in differences],
            }
        )
        return code
    if report is not None:
        ctx.out.print(Text(_summary(report, args.source, args.dest)), soft_wrap=True)
    _print_differences(ctx, differences)
    return code


def _check_source(source: str) -> None:
    """SRC must hold a store: a typo must not read as an empty one.

    Raises:
        CliError: If it does not (exit 1), or psycopg is missing (exit 3).
    """
    if is_conn_string(source):
        _open_on_postgres(source, _shown(source)).close()
    elif not (Path(source) / DATABASE_FILE).is_file():
        raise CliError(
            f"no store at {source}",
            EXIT_FAILED,
            hint=f"SRC is a directory holding {DATABASE_FILE}, or a postgresql:// URL",
        )


def _counts(report: MigrationReport) -> dict[str, object]:
    """The report's numbers, as `--json` prints them."""
    return {name: getattr(report, name) for name in _COUNTS}


def _shown(location: str) -> str:
    """A location to print: a URL's password starred out."""
    return shown_location(argparse.Namespace(path=location))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _summary(report: MigrationReport, source: str, dest: str) -> str:
    resumed = " (resumed)" if report.resumed else ""
    return (
        f"Copied {_plural(report.copied_commits, 'commit')} and "
        f"{_plural(report.copied_checkpoints, 'checkpoint')}{resumed} from "
        f"{_shown(source)} to {_shown(dest)} in {report.seconds:.1f} s: "
        f"{_plural(report.commits, 'commit')}, "
        f"{_plural(report.items, 'item version')} and "
        f"{_plural(report.checkpoints, 'checkpoint')} there now."
    )


def _print_differences(ctx: Context, differences: Sequence[Difference]) -> None:
    if not differences:
        ctx.out.print("Verified: log, history and as_of answer alike on both sides.")
        return
    ctx.out.print(
        Text(f"{_plural(len(differences), 'difference')} found:", style="bold red")
    )
    for d in differences:
        ctx.out.print(Text(f"  {d.check}  {d.where}: {d.detail}"), soft_wrap=True)
