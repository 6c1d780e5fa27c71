"""The edges of the `chronomem` command line (issue 10, item 8).

- What the command line prints as a scope reads back through `--scope` as that
  scope, labels holding `/` included; a `--scope` with too many labels is an
  error, never a shorter scope.
- A hint's command repeats the `--scope` and `--path` given, and runs as printed.
- The undo table's score column is in the order of its rows.
- `HEAD~N` past v0 says how many versions the scope has.
- A scope the store never had is an error that names the store's scopes.
- Every warning, error, hint and "nothing changed" on stderr has one format.

The commands run the way tests/test_cli.py runs them (`cli`: a real process;
`cmd`: `main(argv)` in this process), with its fixtures.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.cli._app import parse_scope, scope_arg
from tests import test_cli as base
from tests.test_cli import ALICE, A, _make_demo, _state

# tests/test_cli.py's fixtures, shared rather than copied.
cmd, child_env, demo, copy = base.cmd, base.child_env, base.demo, base.copy

TEAM = ("memories", "team")
RED = ("memories", "team/red")


@pytest.fixture(scope="module")
def slashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """memories/team (v1) and ["memories", "team/red"] (v2): one label holds "/"."""
    path = tmp_path_factory.mktemp("slashed") / "memory"
    with ChronoStore.from_path(path, scope_depth=2) as store:
        store.put(TEAM, "x", {"v": 1})
        store.put(RED, "lead", {"name": "Ana"})
        store.put(RED, "lead", {"name": "Bo"})
    return path


@pytest.fixture
def spaced(tmp_path: Path) -> Path:
    """The demo store in a directory whose name needs quoting."""
    return _make_demo(tmp_path / "my memory")


def _printed_command(line: str) -> list[str]:
    """The arguments of the `chronomem ...` command a line names: in backticks,
    in parentheses, or at its end."""
    found = re.search(
        r"`chronomem ([^`]+)`|\(chronomem ([^)]+)\)|chronomem (.+)$", line
    )
    assert found, line
    return shlex.split(next(group for group in found.groups() if group))


# -- a printed scope reads back ---------------------------------------------------

LABELS = st.text(min_size=1, max_size=8).filter(lambda label: "." not in label)


@given(st.lists(LABELS, min_size=1, max_size=4).map(tuple))
def test_scope_arg_reads_back_as_the_same_scope(scope: tuple[str, ...]) -> None:
    assert parse_scope(scope_arg(scope)) == scope
    assert parse_scope(shlex.split(shlex.quote(scope_arg(scope)))[0]) == scope


def test_every_scope_stats_prints_reads_back(cmd, slashed: Path) -> None:
    run = cmd("stats", path=slashed)
    assert run.code == 0, run
    rows = re.findall(r"^│ (\S.*?) +│ +v(\d+) │", run.out, re.M)
    assert rows == [
        ("memories/team", "1"),
        ('["memories", "team/red"]', "2"),
    ], run
    for printed, head in rows:
        run = cmd("log", "--scope", printed, "--json", path=slashed)
        assert run.code == 0, run
        assert run.json()["head"] == int(head)
    run = cmd("log", "--scope", rows[1][0], path=slashed)
    assert run.out.startswith('["memories", "team/red"] (HEAD v2)'), run


def test_a_scope_split_at_a_labels_slash_is_an_error(cmd, slashed: Path) -> None:
    """Before: `memories/team/red` quietly read memories/team's log (exit 0)."""
    run = cmd("log", "--scope", "memories/team/red", path=slashed)
    assert (run.code, run.out) == (2, ""), run
    assert run.err.splitlines() == [
        "error: --scope memories/team/red has 3 labels, but this store's scopes "
        "have 2 (scope_depth=2)",
        'hint: a label holds "/": --scope \'["memories", "team/red"]\'',
    ], run
    run = cmd("stats", "--scope", "memories/team/red", path=slashed)
    assert (run.code, run.out) == (2, ""), run


def test_a_scope_on_a_one_timeline_store_is_an_error(cmd, tmp_path: Path) -> None:
    with ChronoStore.from_path(tmp_path) as store:
        store.put(("notes",), "todo", {"text": "milk"})
    run = cmd("log", "--scope", "notes", path=tmp_path)
    assert (run.code, run.out) == (2, ""), run
    assert "scope_depth=0): leave --scope out" in run.err, run
    assert cmd("log", path=tmp_path).code == 0


# -- hints repeat the options given -----------------------------------------------


def test_the_redo_an_undo_prints_runs_as_printed(cmd, spaced: Path) -> None:
    run = cmd("undo", "3.1", *A, "--yes", path=spaced)
    assert run.code == 0, run
    redo = run.out.splitlines()[-1]
    assert redo == (
        f"To redo: chronomem rollback 4 --scope memories/alice --path '{spaced}'"
    ), run
    run = cmd(*_printed_command(redo))
    assert run.code == 0, run
    assert _state(spaced)[1]["home"] == {"city": "New York City"}


def test_conflict_hints_run_as_printed(cmd, spaced: Path) -> None:
    for args in (["revert", "1"], ["undo", "1.1", "--yes"]):
        run = cmd(*args, *A, path=spaced)
        assert run.code == 1, run
        hint = run.err.splitlines()[-1]
        assert hint.startswith("hint: ") and f"--path '{spaced}'" in hint, run
        again = cmd(*_printed_command(hint), "--dry-run")
        assert again.code == 0, again
        assert "Dry run: would roll back memories/alice to v0" in again.out


def test_an_error_hint_repeats_the_scope_and_path(cmd, spaced: Path) -> None:
    run = cmd("show", "9", *A, path=spaced)
    assert run.code == 1, run
    assert run.err.splitlines()[-1] == (
        f"hint: `chronomem log --scope memories/alice --path '{spaced}'` lists "
        "the versions"
    ), run
    assert cmd(*_printed_command(run.err.splitlines()[-1])).code == 0


# -- the undo table's order --------------------------------------------------------


def _table(out: str) -> tuple[list[str], list[list[str]]]:
    """The header and the first line of each row of the candidates table."""
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("┃ #"))
    rows = [line for line in lines if re.match(r"│ \d+ │", line)]

    def cells(line: str) -> list[str]:
        return [cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]]

    return cells(header), [cells(row) for row in rows]


def test_the_undo_table_shows_the_score_its_rows_are_in(cmd, copy: Path) -> None:
    """ "undo the home" ranks 1.1 (similarity 0.28) over 3.1 (0.35): the column
    the rows are ordered by is the fused score, and it says so."""
    run = cmd("undo", "undo the home", *A, "--dry-run", path=copy)
    header, rows = _table(run.out)
    assert [row[1] for row in rows][:2] == ["1.1", "3.1"], run
    similarity = [float(row[header.index("Similarity")]) for row in rows]
    assert similarity[0] < similarity[1], run  # meaning alone is not the order
    assert "Fused" in header, run
    fused = [float(row[header.index("Fused")]) for row in rows]
    assert fused == sorted(fused, reverse=True) and len(set(fused)) > 1, run
    data = cmd("--json", "undo", "undo the home", *A, "--dry-run", path=copy).json()
    shown = [c["scores"]["rrf"] for c in data["resolution"]["candidates"]]
    assert [f"{score:.4f}" for score in shown] == [f"{f:.4f}" for f in fused]


# -- HEAD~N past v0 -----------------------------------------------------------------


def test_head_past_v0_says_how_many_versions_there_are(cmd, demo: Path) -> None:
    run = cmd("show", "HEAD~100", *A, path=demo)
    assert (run.code, run.out) == (1, ""), run
    assert run.err.splitlines()[0] == (
        "error: memories/alice has only 4 versions: HEAD~100 goes back past v0 "
        "(HEAD~4 is v0, the empty state)"
    ), run
    assert cmd("rollback", "HEAD~5", *A, "--dry-run", path=demo).code == 1
    assert cmd("diff", "HEAD~4", *A, "--json", path=demo).json()["from"] == 0


# -- a scope the store never had ---------------------------------------------------

UNKNOWN = [
    ["log"],
    ["show", "HEAD"],
    ["diff", "0"],
    ["rollback", "0", "--dry-run"],
    ["revert", "1", "--dry-run"],
    ["undo", "forget the cat", "--dry-run"],
    ["stats"],
]


@pytest.mark.parametrize("args", UNKNOWN, ids=lambda args: args[0])
def test_an_unknown_scope_is_an_error_naming_the_scopes(
    cmd, demo: Path, args: list[str]
) -> None:
    """Before: `log` printed "memories/bobb has no commits yet" and exited 0."""
    run = cmd(*args, "--scope", "memories/bobb", path=demo)
    assert (run.code, run.out) == (1, ""), run
    assert run.err.splitlines() == [
        "error: no scope memories/bobb in this store; it has memories/bob, "
        "memories/alice",
        f"hint: `chronomem stats --path {demo}` lists the scopes",
    ], run


def test_an_empty_store(cmd, tmp_path: Path) -> None:
    ChronoStore.from_path(tmp_path / "scoped", scope_depth=2).close()
    run = cmd("stats", path=tmp_path / "scoped")
    assert run.code == 0 and "Scopes         0" in run.out, run
    run = cmd("log", *A, path=tmp_path / "scoped")
    assert (run.code, run.out) == (1, ""), run
    assert run.err == (
        "error: no scope memories/alice: this store has no commits yet\n"
    ), run
    ChronoStore.from_path(tmp_path / "flat").close()
    run = cmd("log", path=tmp_path / "flat")
    assert (run.code, run.out) == (0, "the store has no commits yet\n"), run


def test_a_scope_reset_to_v0_is_still_known(cmd, copy: Path) -> None:
    with ChronoStore.from_path(copy) as store:
        store.reset(ALICE, 0)
    run = cmd("log", *A, path=copy)
    assert (run.code, run.out) == (0, "memories/alice has no commits yet\n"), run


# -- one format on stderr ------------------------------------------------------------

_NOISY = """
import logging, sys, warnings
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.cli import main

stats = ChronoStore.stats
def noisy(self):
    logging.getLogger("langgraph_chronomem.x").warning("the library says %s", "hi")
    warnings.warn("a dependency says hi", UserWarning)
    return stats(self)
ChronoStore.stats = noisy
sys.exit(main())
"""


def test_every_warning_has_one_format(child_env: dict[str, str], demo: Path) -> None:
    """A library's log warning and a `warnings.warn` read alike: one `warning:`
    line each, or with --json one `{"warning": ...}` object each. Before, the
    `warnings.warn` printed as `file:line: UserWarning: ...` plus its source line,
    and --json left both as text."""

    def run(*args: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _NOISY, *args, "--path", str(demo)],
            capture_output=True, text=True, env=child_env, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stderr.splitlines()

    lines = run("stats")
    assert len(lines) == 2 and lines[0] == "warning: the library says hi", lines
    assert re.fullmatch(r"warning: .+:\d+: UserWarning: a dependency says hi", lines[1])
    objects = [json.loads(line) for line in run("--json", "stats")]
    assert [o["warning"]["message"] for o in objects] == [
        "the library says hi",
        lines[1].removeprefix("warning: "),
    ]
    assert objects[0]["warning"]["source"] == "langgraph_chronomem.x"


def test_stderr_lines_are_never_wrapped(cmd, copy: Path, monkeypatch) -> None:
    """Before, a revert conflict printed a red `error:` wrapped at the terminal's
    width (an undo conflict said `nothing changed:`), breaking the hint's command."""
    monkeypatch.setenv("COLUMNS", "40")
    for args in (["revert", "1"], ["undo", "1.1", "--yes"]):
        run = cmd(*args, *A, path=copy)
        assert run.code == 1, run
        lines = run.err.splitlines()
        assert len(lines) == 2, run
        assert lines[0].startswith("nothing changed: cannot revert "), run
        assert lines[1].startswith("hint: "), run
        assert _printed_command(lines[1]) == [
            "rollback", "0", "--scope", "memories/alice", "--path", str(copy),
        ]  # fmt: skip
