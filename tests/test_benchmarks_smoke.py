"""The benchmarks run end to end on tiny inputs and report what they promise.

They check the harnesses, not the scores."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from benchmarks.harness.subjects import CHRONO_TWIN, STORES
from langgraph_chronomem import ChronoStore

ROOT = Path(__file__).resolve().parent.parent
QUICK_TINY = (
    "benchmarks/store/store_ops.py --quick --sizes 100 200 --ops 5 --rollbacks 3"
)


def run_benchmark(*args: str, timeout: float) -> str:
    """Run a benchmark script from the repository root; its stdout (the report)."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_store_ops_quick_reports_every_store_and_target(tmp_path: Path) -> None:
    report = tmp_path / "ops.json"
    table = run_benchmark(
        *QUICK_TINY.split(),
        *("--twin", "--dir", str(tmp_path), "--json", str(report)),
        timeout=60,
    )
    for store in (*STORES, CHRONO_TWIN):
        assert f"| 100 | {store} |" in table
        assert f"| 200 | {store} |" in table
    assert "### Targets" in table
    results = json.loads(report.read_text())["results"]
    assert set(results["200"]) == {*STORES, CHRONO_TWIN}
    assert results["200"]["ChronoStore"]["rollback"]["n"] == 3
    assert "rollback" not in results["200"]["InMemoryStore"]


AS_OF_TINY = "benchmarks/store/as_of_search.py --commits 120 --items 30 --queries 2"


def test_as_of_search_reports_head_and_every_version(tmp_path: Path) -> None:
    report = tmp_path / "as_of.json"
    table = run_benchmark(
        *AS_OF_TINY.split(),
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=120,
    )
    assert "## As-of search by meaning against HEAD search" in table
    assert "| HEAD search |" in table
    rows = json.loads(report.read_text())["rows"]
    assert [row["version"] for row in rows] == [20, 60, 12]
    assert all(len(row["warm_ms"]) == 2 for row in rows)


INDEXED_TINY = (
    "benchmarks/store/indexed_writes.py --quick --sizes 40 --ops 4 --searches 3 "
    "--burst 5 --repeats 1"
)


def _loads_sqlite_vec() -> bool:
    from benchmarks.store.indexed_writes import sqlite_with_extensions

    return sqlite_with_extensions() is not None


@pytest.mark.skipif(
    not _loads_sqlite_vec(), reason="SqliteStore's vector index needs pysqlite3"
)
def test_indexed_writes_quick_reports_every_lane_and_the_first_undo(
    tmp_path: Path,
) -> None:
    from benchmarks.store.indexed_writes import LANES, PHASES

    report = tmp_path / "indexed.json"
    table = run_benchmark(
        *INDEXED_TINY.split(),
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=120,
    )
    assert "## Indexed writes and the first undo" in table
    for lane in LANES:
        assert f"| 40 | {lane} |" in table
    assert "### Targets" in table
    measured = json.loads(report.read_text())
    lanes = measured["side_by_side"]["40"]
    assert set(lanes) == set(LANES)
    assert all(set(lanes[lane]) == set(PHASES) for lane in LANES)
    assert lanes["ChronoStore"]["put"]["n"] == 4
    (undo,) = measured["undo"]
    assert undo["size"] == 40 and undo["write_ms"]["n"] == 40
    assert len(undo["undo_ms"]) == 2 and all(ms > 0 for ms in undo["undo_ms"])
    assert measured["targets"][1]["passed"] is None  # no 10k store in a quick run


UNDO_TINY = (
    "benchmarks/undo/undo_latency.py --quick --sizes 40 --rounds 1 --rerank-top 5 "
    "--reranker minilm-bi-encoder-pair-scorer"
)


def test_undo_latency_quick_reports_every_stage_and_one_off_cost(
    tmp_path: Path,
) -> None:
    from benchmarks.undo.undo_stages import STAGES
    from benchmarks.undo.undo_workload import REQUESTS

    report = tmp_path / "undo.json"
    table = run_benchmark(
        *UNDO_TINY.split(),
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=120,
    )
    assert "## Undo latency" in table
    assert "Reranker: `" in table
    assert "rerank_top=5" in table
    assert "`minilm-bi-encoder-pair-scorer` through FlashRank" in table
    for stage in STAGES:
        if stage != "shortcut":
            assert f"| {stage}" in table
    measured = json.loads(report.read_text())
    size = measured["sizes"]["40"]
    assert size["heads"] == {"alice": 40, "bob": 10, "carol": 10, "dmitri": 10}
    assert size["one_off_ms"]["commits embedded"] == 70
    searches = sum(r.path == "search" for r in REQUESTS)
    assert size["end_to_end"]["search"]["n"] == searches
    assert size["end_to_end"]["all"]["n"] == len(REQUESTS)
    assert all(len(r["stages_ns"]) == 1 for r in size["requests"])
    assert measured["target"]["passed"] is None  # no 10k store in a quick run


LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not here (CC BY-NC)")
def test_rollback_locomo_quick_scores_every_system(tmp_path: Path) -> None:
    from benchmarks.undo.locomo.render import BASELINES
    from benchmarks.undo.rollback_locomo import SYSTEMS

    report = tmp_path / "locomo.json"
    table = run_benchmark(
        "benchmarks/undo/rollback_locomo.py",
        *("--quick", "--max-anchors", "2", "--data", str(LOCOMO)),
        *("--store-dir", str(tmp_path), "--json", str(report)),
        timeout=240,
    )
    assert "## Rollback on LoCoMo" in table
    assert "cross-encoder" in table  # the reranker is named for what it is
    for system in SYSTEMS.values():
        assert f"| {system.name} |" in table
    measured = json.loads(report.read_text())
    requests = measured["requests"]
    assert requests and {r["conv"] for r in requests} == {"conv-30"}
    assert all(set(r["systems"]) == set(SYSTEMS) for r in requests)
    assert all(r["gold"][0] <= r["gold"][1] <= r["head"] for r in requests)
    results = measured["summary"]["tuning/main"]
    assert set(results) == {*SYSTEMS, *BASELINES}
    assert 0.0 <= results["bm25"]["r1"] <= results["bm25"]["r5"] <= 1.0


def test_undo_agent_memory_quick_scores_both_splits(tmp_path: Path) -> None:
    """The data set holds together: every request's gold exists in its user's
    history, and the report covers both splits."""
    from benchmarks.undo.agent_memory.data import load_requests, load_users

    users = load_users()
    assert len(users) >= 3 and sum(len(u.events) for u in users) >= 300
    requests = load_requests(users=users)
    assert len(requests) >= 150
    assert sum(r.kind == "none" for r in requests) >= 0.1 * len(requests)
    report = tmp_path / "agent_memory.json"
    table = run_benchmark(
        "benchmarks/undo/undo_agent_memory.py", "--quick", "--json", str(report),
        timeout=240,
    )  # fmt: skip
    assert "## Test split: oskar" in table and "## Tuning split: maya" in table
    measured = json.loads(report.read_text())
    named = [r for r in measured["requests"] if r["gold"] is not None]
    assert named and all(r["systems"]["default"]["ms"] > 0 for r in named)
    for split in ("test", "tuning"):
        figures = measured["summary"][split]["default"]
        assert 0.0 <= figures["r1"] <= figures["r5"] <= 1.0


@pytest.mark.parametrize("battery", ["a", "b", "c", "d"])
def test_a_blind_battery_holds_together(tmp_path: Path, battery: str) -> None:
    """Each request's write, or the write a near miss resembles, is in its
    person's history, a named request's gold change exists, and memories are
    the sizes the brief asked for."""
    from benchmarks.undo.agent_memory.data import (
        BATTERIES,
        gold_of,
        ingest,
        load_requests,
        load_users,
    )

    users = {u.user: u for u in load_users(BATTERIES[battery])}
    requests = load_requests(BATTERIES[battery] / "requests", list(users.values()))
    assert sum(r.kind == "near_miss" for r in requests) >= 0.3 * len(requests)
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        for user in users.values():
            keys = ingest(store, user)
            live = len(store.search(user.scope, limit=1000))
            if user.size == "small":
                assert 5 <= live <= 20, (user.user, live)
            else:
                assert len(user.events) >= 300, user.user
            for request in (r for r in requests if r.user == user.user):
                assert request.near is None or request.near in keys, request
                gold = gold_of(request, keys, user)
                assert (gold.change is None) == (request.kind in ("none", "near_miss"))


def test_undo_agent_memory_quick_on_a_battery(tmp_path: Path) -> None:
    report = tmp_path / "battery.json"
    table = run_benchmark(
        "benchmarks/undo/undo_agent_memory.py", "--battery", "c", "--quick",
        "--json", str(report), timeout=240,
    )  # fmt: skip
    assert "Near misses, plain requests, candidates, R@1 by style:" in table
    figures = json.loads(report.read_text())["summary"]["c"]["default"]
    assert figures["near"] > 0 and figures["asking"] > figures["near"]
    assert 0 <= figures["near_acted"] <= figures["near"]


def test_checkpoint_ops_quick_measures_both_savers(tmp_path: Path) -> None:
    report = tmp_path / "checkpoints.json"
    table = run_benchmark(
        "benchmarks/store/checkpoint_ops.py", "--quick",
        *("--threads", "1", "--checkpoints", "5", "--ops", "5"),
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=120,
    )  # fmt: skip
    assert "## Checkpointer operations" in table
    measured = json.loads(report.read_text())
    for size in ("2048", "20480"):
        assert set(measured["results"][size]) == {"ChronoCheckpointer", "SqliteSaver"}
    target = measured["targets"][0]
    assert target["name"].startswith("ChronoCheckpointer get_tuple")
    assert target["passed"] is not None and target["worst"] > 0


def test_exact_recall_quick_finds_what_brute_force_finds(tmp_path: Path) -> None:
    from benchmarks.store.exact_recall import CHRONO, IN_MEMORY, UNDO

    report = tmp_path / "recall.json"
    table = run_benchmark(
        "benchmarks/store/exact_recall.py", "--quick",
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=180,
    )  # fmt: skip
    assert "## Exact search recall" in table
    measured = json.loads(report.read_text())
    assert measured["recall_min"] == 1.0
    stores = {row["store"] for row in measured["summary"]}
    assert stores == {CHRONO, IN_MEMORY, UNDO}
    assert measured["checks"] and all(c["passed"] for c in measured["checks"])
    firsts = [
        q for q in measured["queries"]
        if q["set"].startswith("issue") and q["query"] == "mmm"
    ]  # fmt: skip
    assert len(firsts) == 8  # 2 scope depths x 2 prefixes x 2 stores
    assert all(q["first"] == "test/M/m" and q["first_score"] > 0.9999 for q in firsts)


def test_crash_loop_quick_kills_every_phase_and_the_store_heals(
    tmp_path: Path,
) -> None:
    """20 SIGKILLs inside indexed puts, batches, rewinds, reindex and catch-up:
    the store always opens, its log is whole, its index never silently stale
    (the loop exits 1 on any failed check, which fails `run_benchmark`)."""
    from benchmarks.durability._crash_child import PHASES
    from benchmarks.durability.crash_loop import CHECKS

    report = tmp_path / "crash.json"
    table = run_benchmark(
        "benchmarks/durability/crash_loop.py", "--quick",
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=300,
    )  # fmt: skip
    assert "## Crash loop" in table
    summary = json.loads(report.read_text())["summary"]
    assert summary["kills"] == 20
    assert summary["failures"] == dict.fromkeys(CHECKS, 0)
    phases = summary["by_phase"]
    assert set(phases) == set(PHASES)
    assert all(figures["kills"] == 4 for figures in phases.values())
    torn = sum(figures["damaged"] for figures in phases.values())
    assert torn == 2
    assert sum(figures["moved_aside"] for figures in phases.values()) >= torn


def test_compaction_quick_keeps_what_it_must_and_shrinks_the_file(
    tmp_path: Path,
) -> None:
    report = tmp_path / "compaction.json"
    table = run_benchmark(
        "benchmarks/forgetting/compaction.py", "--quick",
        *("--dir", str(tmp_path), "--json", str(report)),
        timeout=300,
    )  # fmt: skip
    assert "## Compaction" in table
    measured = json.loads(report.read_text())
    assert all(measured["checks"].values()), measured["checks"]
    assert measured["versions erased"] == 100 * 14
    assert measured["after / before"] < 0.7


def test_no_store_always_times_its_op_after_the_same_neighbour() -> None:
    # An op runs faster right after one of the same code, so a store that
    # always followed one neighbour would be measured with that neighbour's
    # warm or cold caches: the turns are shuffled every round.
    from benchmarks.harness.subjects import Subject
    from benchmarks.store.store_ops import QUICK, run_phase

    names = ["a", "b", "c", "d", "e"]
    subjects = [
        Subject(name, 1, store=None, close=lambda: None)  # type: ignore[arg-type]
        for name in names
    ]
    ran: list[str] = []

    def prepare(subject: Subject, i: int) -> Callable[[], None]:
        return lambda: ran.append(subject.name)

    settings = replace(QUICK, ops=200)
    samples = run_phase(subjects, "get", prepare, settings)
    assert all(len(samples[(1, n)]) == 200 for n in names)
    after = Counter(pairwise(ran))
    for name in names:
        followed = [after[(other, name)] for other in names if other != name]
        assert max(followed) < 0.5 * sum(followed), (name, followed)


def test_run_phase_quiesces_a_store_after_each_of_its_ops_untimed() -> None:
    # A store's background work must run before the next store's timed op, not
    # inside it, and neither in its own time nor in its time budget.
    from langgraph.store.memory import InMemoryStore

    from benchmarks.harness.subjects import Subject
    from benchmarks.store.store_ops import QUICK, run_phase

    pause_ns = 50_000_000
    ran: list[str] = []

    def quiesce() -> None:
        time.sleep(pause_ns / 1e9)
        ran.append("quiesce")

    quiet = Subject("quiet", 1, InMemoryStore(), lambda: None, quiesce=quiesce)
    plain = Subject("plain", 1, InMemoryStore(), lambda: None)

    def prepare(subject: Subject, i: int) -> Callable[[], None]:
        def put() -> None:
            subject.store.put(("ns",), f"k{i}", {"i": i})
            ran.append(subject.name)

        return put

    # Quiesced time inside the budget would stop "quiet" after 3 ops.
    settings = replace(QUICK, ops=6, phase_seconds=0.1)
    samples = run_phase([quiet, plain], "put", prepare, settings)
    assert [len(samples[(1, n)]) for n in ("quiet", "plain")] == [6, 6]
    assert all(ns < pause_ns for ns in samples[(1, "quiet")])
    assert [b for a, b in pairwise(ran) if a == "quiet"] == ["quiesce"] * 6
    assert ran.count("quiesce") == 6


def test_shared_index_quick_reports_every_kind_of_violation(tmp_path: Path) -> None:
    """The report and its JSON; the round itself at the test's size is
    `tests/test_chroma_server.py`'s."""
    from benchmarks.concurrency._shared_index_worker import KINDS

    report = tmp_path / "shared_index.json"
    table = run_benchmark(
        "benchmarks/concurrency/shared_index.py", "--quick",
        *("--workers", "2", "--steps", "4", "--reindex", "2", "--resets"),
        *("--json", str(report)),
        timeout=120,
    )  # fmt: skip
    assert "## Several processes on one PostgreSQL log and one Chroma server" in table
    assert all(f"| {kind} | 0 | 0 |" in table for kind in KINDS)
    measured = json.loads(report.read_text())
    (done,) = measured["rounds"]
    assert done["reindexes"] == 1 and done["violations"] == []
    assert done["writes"] >= 2 * 2 * 4 and done["checked"] > 0
    assert measured["violations"] == dict.fromkeys(KINDS, 0)
