"""`chronomem branch create | list | log | diff | merge | delete`, run through
the same entry point in this process (`main(argv)`, output captured): what each
prints with `--json`, and a conflicting merge that applies nothing (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_chronomem import ChronoStore
from langgraph_chronomem.cli import main

ME = ("memories", "alice")


def chronomem(
    capsys: pytest.CaptureFixture[str], path: Path, *argv: str
) -> tuple[int, Any]:
    """Run one command with `--json`; its exit code and what it printed."""
    code = main(["--path", str(path), "--json", *argv, "--scope", "memories/alice"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else None


def test_branch_verbs_make_list_compare_merge_and_delete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        store.put(ME, "city", {"city": "Boston"})
        store.put(ME, "pet", {"kind": "cat"})

    code, made = chronomem(capsys, tmp_path, "branch", "create", "trial", "--at", "1")
    assert code == 0 and made["branch"]["fork"] == 1 and made["branch"]["head"] == 1
    with ChronoStore.from_path(tmp_path) as store:
        store.on_branch(ME, "trial").put(ME, "city", {"city": "Paris"})
        store.put(ME, "city", {"city": "Lima"})

    code, listed = chronomem(capsys, tmp_path, "branch", "list")
    assert [(b["name"], b["fork"], b["head"]) for b in listed["branches"]] == [
        ("trial", 1, 2)
    ]
    code, log = chronomem(capsys, tmp_path, "branch", "log", "trial")
    assert [c["version"] for c in log["commits"]] == [2]
    assert log["commits"][0]["labels"]["branch"] == "trial"
    code, diff = chronomem(capsys, tmp_path, "branch", "diff", "trial")
    assert [(c["key"], c["old"], c["new"]) for c in diff["changes"]] == [
        ("city", {"city": "Lima"}, {"city": "Paris"}),
        ("pet", {"kind": "cat"}, None),  # made after the fork: not on the branch
    ]

    code, refused = chronomem(capsys, tmp_path, "branch", "merge", "trial")
    assert code == 1 and refused["applied"] is False
    assert refused["conflicts"] == [
        {
            "namespace": list(ME),
            "key": "city",
            "path": "memories/alice/city",
            "field": None,
            "base": {"city": "Boston"},
            "ours": {"city": "Paris"},
            "theirs": {"city": "Lima"},
        }
    ]
    with ChronoStore.from_path(tmp_path) as store:
        assert store.head(ME) == 3  # nothing merged

    code, merged = chronomem(
        capsys, tmp_path, "branch", "merge", "trial", "--resolve", "ours"
    )
    assert code == 0 and merged["commit"]["op"] == "merge"
    with ChronoStore.from_path(tmp_path) as store:
        assert store.get(ME, "city").value == {"city": "Paris"}
        assert store.get(ME, "pet").value == {"kind": "cat"}

    code, gone = chronomem(capsys, tmp_path, "branch", "delete", "trial")
    assert code == 0 and gone == {
        "action": "delete",
        "scope": list(ME),
        "name": "trial",
    }
    code, _ = chronomem(capsys, tmp_path, "branch", "delete", "trial")
    assert code == 1  # no such branch any more
