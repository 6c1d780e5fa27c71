"""docs/cli.md's `--help` blocks are what the parser prints, so the reference
cannot drift from the command line (issue 32, item 18).

Every ```console block of docs/cli.md that starts with `$ chronomem ... --help`
must hold, after that line, exactly what `chronomem ... --help` prints at
`COLUMNS=100`. After changing a command, write them anew:

    python -m tests.test_cli_reference
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from pathlib import Path
from unittest import mock

import pytest

from langgraph_chronomem.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = "100"
HOME_DEFAULT = "~/.local/share/chronomem"
_BLOCK = re.compile(
    r"(```console\n\$ (chronomem(?: [^\n]*)? --help)\n)(.*?)(```)", re.S
)


def help_text(command: str) -> str:
    """What `command` (`chronomem ... --help`) prints, at the docs' width, with
    the default store directory as on a machine without `$XDG_DATA_HOME`."""
    out = io.StringIO()
    with (
        mock.patch.dict(os.environ, {"COLUMNS": WIDTH}),
        mock.patch("langgraph_chronomem.cli._app.DEFAULT_PATH", HOME_DEFAULT),
        contextlib.redirect_stdout(out),
    ):
        assert main(shlex.split(command)[1:]) == 0
    return out.getvalue()


def blocks(text: str) -> list[re.Match[str]]:
    return list(_BLOCK.finditer(text))


def written(text: str) -> str:
    """docs/cli.md with every `--help` block as the parser prints it."""
    return _BLOCK.sub(lambda m: m[1] + help_text(m[2]) + m[4], text)


def test_the_reference_shows_every_command() -> None:
    found = [m[2] for m in blocks(DOCS.read_text())]
    assert "chronomem --help" in found


@pytest.mark.parametrize("block", blocks(DOCS.read_text()), ids=lambda m: m[2])
def test_a_help_block_is_what_the_parser_prints(block: re.Match[str]) -> None:
    assert block[3] == help_text(block[2]), (
        "docs/cli.md is out of date: run `python -m tests.test_cli_reference`"
    )


if __name__ == "__main__":
    DOCS.write_text(written(DOCS.read_text()))
    sys.exit(0)
