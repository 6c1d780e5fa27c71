"""What git users reach for first (issue 32, item 20): `ls` and `cat` at HEAD or
at a version, `search` by meaning at HEAD, a version or a date (issue 35),
`log --oneline`, named versions (`tag`) wherever a version is
taken, and an unknown key named with the keys there are; and a command line
holding bytes that are not UTF-8 (item 9), refused in one line.

The commands run the way tests/test_cli.py runs them (`cli`: a real process;
`cmd`: `main(argv)` in this process), with its fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from langgraph_chronomem import ChronoStore, commit_context
from tests import test_cli as base
from tests.test_cli import ALICE, A, _state

# tests/test_cli.py's fixtures, shared rather than copied.
cmd, cli, child_env, demo, copy = (
    base.cmd,
    base.cli,
    base.child_env,
    base.demo,
    base.copy,
)


def test_ls_lists_the_items_at_head_and_at_a_version(cmd, demo: Path) -> None:
    run = cmd("ls", *A, path=demo)
    assert run.code == 0, run
    assert "memories/alice at v4 (HEAD)" in run.out
    rows = [line for line in run.out.splitlines() if '{"' in line]
    assert [row.split()[1] for row in rows] == ["food", "home", "pet"]
    assert '{"city": "New York City"}' in run.out

    data = cmd("ls", *A, "--at", "HEAD~2", "--json", path=demo).json()
    assert (data["version"], data["head"]) == (2, 4)
    assert [(i["path"], i["value"]) for i in data["items"]] == [
        ("memories/alice/home", {"city": "Boston"}),
        ("memories/alice/pet", {"kind": "cat", "name": "Miso"}),
    ]
    assert set(data["items"][0]) == {
        "namespace", "key", "path", "value", "created_at", "updated_at"
    }  # fmt: skip
    assert "no items" in cmd("ls", *A, "--at", "0", path=demo).out


def test_cat_prints_one_value_as_json(cmd, demo: Path) -> None:
    run = cmd("cat", "memories/alice", "home", path=demo)
    assert (run.code, json.loads(run.out)) == (0, {"city": "New York City"}), run
    run = cmd("cat", "memories/alice", "home", "--at", "v1", "--json", path=demo)
    data = run.json()
    assert (data["version"], data["value"]) == (1, {"city": "Boston"})
    assert data["path"] == "memories/alice/home"


def test_an_unknown_key_names_the_keys_there_are(cmd, demo: Path) -> None:
    for command in ("history", "cat"):
        run = cmd(command, "memories/alice", "hme", path=demo)
        assert (run.code, run.out) == (1, ""), run
        assert run.err == (
            "error: no item memories/alice/hme; memories/alice has home, pet, food\n"
        ), run
    run = cmd("cat", "memories/alice", "food", "--at", "2", path=demo)
    assert "no item memories/alice/food at v2; memories/alice has home, pet" in run.err
    run = cmd("history", "memories/nobody", "home", path=demo)
    assert run.code == 1 and "memories/nobody holds no items" in run.err, run


def test_log_oneline_is_one_line_per_commit(cli, demo: Path) -> None:
    run = cli("log", *A, "--oneline", path=demo)
    assert run.code == 0, run
    lines = run.out.splitlines()
    assert len(lines) == 4
    assert lines[1].startswith("v3 ") and lines[1].endswith(
        "put      updated home: Boston -> New York City"
    )
    assert lines[3].endswith("put      created home: Boston")
    assert "memories/alice" not in run.out  # paths are the scope's own


def test_a_tag_names_a_version_for_every_command(cmd, copy: Path) -> None:
    made = cmd("tag", "before-nyc", "2", *A, "--json", path=copy).json()
    assert made["action"] == "tag"
    assert (made["tag"]["name"], made["tag"]["version"]) == ("before-nyc", 2)
    assert cmd("tag", "latest", *A, path=copy).out == (
        "tagged v4 of memories/alice as latest\n"
    )
    listed = cmd("tag", *A, path=copy)
    assert "before-nyc" in listed.out and "latest" in listed.out
    assert cmd("show", "before-nyc", *A, "--json", path=copy).json()["version"] == 2
    diff = cmd("diff", "before-nyc", "latest", *A, "--json", path=copy).json()
    assert (diff["from"], diff["to"]) == (2, 4)
    at = cmd("ls", *A, "--at", "before-nyc~1", "--json", path=copy).json()
    assert at["version"] == 1
    run = cmd("rollback", "before-nyc", *A, path=copy)
    assert run.code == 0, run
    assert _state(copy)[1]["home"] == {"city": "Boston"}

    refused = cmd("tag", "before-nyc", "3", *A, path=copy)
    assert refused.code == 1 and "already names v2" in refused.err, refused
    assert cmd("tag", "before-nyc", "3", "--force", *A, path=copy).code == 0
    bad = cmd("tag", "v3", *A, path=copy)
    assert bad.code == 2 and "'v3' reads as a version" in bad.err, bad
    gone = cmd("tag", "-d", "latest", *A, "--json", path=copy).json()
    assert gone == {"action": "untag", "tag": gone["tag"]}
    assert gone["tag"]["version"] == 4
    run = cmd("rollback", "latest", *A, path=copy)
    assert run.code == 1, run
    assert "memories/alice has no tag 'latest'; its tags are before-nyc" in run.err


def test_a_tag_a_reset_destroyed_is_shown_and_refused(cmd, copy: Path) -> None:
    with ChronoStore.from_path(copy) as store:
        store.tag(ALICE, "gone", 4)
        store.reset(ALICE, to=2)
    listed = cmd("tag", *A, "--json", path=copy).json()["tags"]
    assert [(t["name"], t["destroyed"]) for t in listed] == [("gone", True)]
    assert "destroyed by a reset" in cmd("tag", *A, path=copy).out
    run = cmd("ls", *A, "--at", "gone", path=copy)
    assert run.code == 1 and "a reset destroyed" in run.err, run


def test_an_argument_that_is_not_utf8_is_refused_in_one_line(
    child_env: dict[str, str], copy: Path
) -> None:
    """Python hands undecodable argv bytes over as lone surrogates."""
    before = _state(copy)
    for args in (
        [b"log", b"--scope", b"memories/alice", b"--author", b"caf\xe9"],
        [b"redact", b"--scope", b"memories/alice", b"--contains", b"\xff"],
        [b"tag", b"x\xff", b"--scope", b"memories/alice"],
    ):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"langgraph_chronomem.cli", *args,
             b"--path", os.fsencode(copy)],
            capture_output=True, env=child_env, timeout=300, check=False,
        )  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert err.startswith("error: argument ") and "is not valid UTF-8" in err
        assert "Traceback" not in err and len(err.splitlines()) == 2  # and a hint
    assert _state(copy) == before
    as_json = base.main(["log", "--json", "--author", "caf\udce9"])
    assert as_json == 2


def test_redact_and_compact_tell_each_phase(copy: Path) -> None:
    """Issue 32, item 13: the library's hook the command line draws from."""
    told: list[tuple[str, int, int | None]] = []
    with ChronoStore.from_path(copy) as store:
        store.redact(ALICE, contains="ramen", progress=lambda *a: told.append(a))
        assert told == [
            ("erase", 0, None), ("erase", 1, 1),
            ("vectors", 0, None), ("vectors", 1, 1),
            ("vacuum", 0, None), ("vacuum", 1, 1),
        ]  # fmt: skip
        told.clear()
        for city in ("Oslo", "Lima"):  # home: v1, v3 and these; two go
            store.put(ALICE, "home", {"city": city})
        store.compact(keep_last=1, vacuum=False, progress=lambda *a: told.append(a))
        assert told == [
            ("erase", 0, 2), ("erase", 1, 2), ("erase", 2, 2),
            ("vectors", 0, None), ("vectors", 1, 1),
        ]  # fmt: skip


def test_progress_shows_on_a_terminal_only(
    child_env: dict[str, str], copy: Path
) -> None:
    """A bar per phase on a terminal's stderr; nothing in a pipe."""
    import pty

    args = [sys.executable, "-m", "langgraph_chronomem.cli", "redact", *A]
    args += ["--contains", "ramen", "--path", str(copy)]
    piped = subprocess.run(args, capture_output=True, text=True, env=child_env)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    with ChronoStore.from_path(copy) as store:  # something to compact
        for city in ("Oslo", "Lima"):
            store.put(ALICE, "home", {"city": city})
    leader, follower = pty.openpty()
    done = subprocess.run(
        [*args[:3], "compact", "--keep-last", "1", "--path", str(copy)],
        stdout=subprocess.PIPE, stderr=follower, env=child_env, timeout=300,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(leader, 65536):
            shown += chunk
    os.close(leader)
    assert done.returncode == 0
    assert b"erasing" in shown and b"rewriting the database file" in shown, shown


def test_search_ranks_by_meaning_at_head_a_version_or_a_date(
    cmd, tmp_path: Path
) -> None:
    path = tmp_path / "memory"
    with ChronoStore.from_path(path, scope_depth=2, index={"fields": ["text"]}) as s:
        for day, key, text in [
            (datetime(2024, 3, 1), "job", "Alice works as a teacher"),
            (datetime(2024, 3, 2), "home", "Alice lives in Boston"),
            (datetime(2024, 4, 1), "job", "Alice works as a nurse"),
        ]:
            with commit_context(timestamp=day.replace(tzinfo=timezone.utc)):
                s.put(ALICE, key, {"text": text})
    head = cmd("search", *A, "her occupation", "--json", path=path).json()
    assert head["items"][0]["value"] == {"text": "Alice works as a nurse"}
    march = cmd(
        "search", *A, "her occupation", "--at", "2024-03-31", "--json", path=path
    ).json()
    assert (march["version"], march["head"]) == (2, 3)
    texts = [i["value"]["text"] for i in march["items"]]
    assert texts == ["Alice works as a teacher", "Alice lives in Boston"]
    assert march["items"][0]["score"] > march["items"][1]["score"]
    run = cmd("search", *A, "her occupation", "--at", "v1", "-n", "1", path=path)
    assert run.code == 0, run
    assert "memories/alice at v1: her occupation" in run.out
    assert "teacher" in run.out and "Boston" not in run.out
    bad = cmd("search", *A, "job", "--at", "2024-13-45", path=path)
    assert bad.code == 2, bad
