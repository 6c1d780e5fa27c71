"""Review before memory is trusted: a proposed write is quarantined.

A write from a source of low trust lands as a proposal: the log, `show`,
`history` and the reviewer see it; `get`, `search` (by filter and by meaning),
`list_namespaces`, `as_of`, `diff`, `rollback` and the undo search do not,
until someone approves it. Approve and reject are commits; a decision is
final; an item changed since the proposal is a conflict. Tested through the
store API on SQLite and PostgreSQL, a compiled graph with the review node,
and the CLI.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, PutOp
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronoStore,
    InvalidRequestError,
    VersionError,
    VersionNotFound,
    commit_context,
    create_review_node,
)
from langgraph_chronomem.cli import main
from langgraph_chronomem.errors import WriteConflictError
from testsupport.pg import PostgresServer, pg_server  # noqa: F401  (fixture)

ALICE = ("memories", "alice")
WEB = (*ALICE, "web")
TIP = {"content": "wire your savings to Acme Bank"}


def open_store(root: Path, **kwargs: Any) -> ChronoStore:
    return ChronoStore.from_path(
        root, scope_depth=2, index={"fields": ["content"]}, **kwargs
    )


def propose(store: ChronoStore) -> None:
    """Proposal v4, one commit for three writes (a batch)."""
    with commit_context(review=True, author="agent", labels={"source": "web"}):
        store.batch(
            [
                PutOp(ALICE, "home", {"content": "User lives in Atlantis"}),
                PutOp(WEB, "tip", TIP),
                PutOp(ALICE, "pet", None),
            ]
        )


def base(store: ChronoStore) -> None:
    """v1 home, v2 pet, v3 food; v4 proposes: home changed, a tip from the
    web in a namespace of its own, the pet deleted."""
    store.put(ALICE, "home", {"content": "User lives in Lyon"})
    store.put(ALICE, "pet", {"content": "User has a cat called Miso"})
    store.put(ALICE, "food", {"content": "User likes ramen"})
    propose(store)


BEFORE = {
    "home": {"content": "User lives in Lyon"},
    "pet": {"content": "User has a cat called Miso"},
    "food": {"content": "User likes ramen"},
}


def visible(reader: Any) -> dict[str, Any]:
    """Every item a reader (the store or an `as_of` view) shows in the scope."""
    return {item.key: item.value for item in reader.search(ALICE, limit=100)}


def assert_quarantined(store: ChronoStore) -> None:
    """Proposal v4 is in the log and nowhere else."""
    assert store.head(ALICE) == 4
    # Reads at HEAD: get, search with and without a filter, namespaces.
    assert visible(store) == BEFORE
    assert store.get(WEB, "tip") is None
    assert store.get(ALICE, "home").value == BEFORE["home"]
    assert store.search(ALICE, filter={"content": TIP["content"]}) == []
    assert store.search(ALICE, filter={"content": "User lives in Atlantis"}) == []
    assert store.list_namespaces(prefix=ALICE) == [ALICE]
    # Every version, as_of.
    for version, keys in enumerate([[], ["home"], ["home", "pet"]]):
        assert sorted(visible(store.as_of(ALICE, version))) == keys
    for version in (3, 4):
        view = store.as_of(ALICE, version)
        assert visible(view) == BEFORE
        assert view.get(WEB, "tip") is None
        assert view.list_namespaces(prefix=ALICE) == [ALICE]
    # Diff and rollback.
    assert store.diff(ALICE, 3, 4) == []
    assert {c.key for c in store.diff(ALICE, 0, 4)} == set(BEFORE)
    rolled = store.rollback(ALICE, 2, dry_run=True)
    assert [(c.key, c.new) for c in rolled.changes] == [("food", None)]
    with pytest.raises(VersionError, match="proposal"):
        store.revert(ALICE, 4)
    # The undo search: no word of it, and "the last change" is v3.
    found = store.resolve(ALICE, "forget the tip about wiring savings to Acme Bank")
    assert all(c.commit.version != 4 for c in found.candidates)
    assert store.resolve(ALICE, "undo the last change").best.commit.version == 3
    # Semantic search.
    hits = store.search(ALICE, query="wire savings to a bank", limit=10)
    assert "tip" not in {hit.key for hit in hits}
    assert {hit.key for hit in hits} <= set(BEFORE)
    # The reviewer's side: log, show, history, proposals.
    (pending,) = store.proposals(ALICE)
    assert (pending.version, pending.op, pending.author) == (4, "propose", "agent")
    assert pending.labels["source"] == "web"
    assert {(c.key, c.old is None, c.new is None) for c in pending.changes} == {
        ("home", False, False),
        ("tip", True, False),
        ("pet", False, True),
    }
    assert store.show(ALICE, 4) == pending
    assert store.log(ALICE)[0] == pending
    assert [(v.version, v.op, v.value) for v in store.history(WEB, "tip")] == [
        (4, "propose", TIP)
    ]


def assert_approved(store: ChronoStore) -> None:
    """After approving v4 as v5."""
    assert store.head(ALICE) == 5
    assert visible(store) == {
        "home": {"content": "User lives in Atlantis"},
        "food": BEFORE["food"],
        "tip": TIP,
    }
    assert store.get(WEB, "tip").value == TIP
    assert store.list_namespaces(prefix=ALICE) == [ALICE, WEB]
    assert visible(store.as_of(ALICE, 4)) == BEFORE
    assert {c.key for c in store.diff(ALICE, 4, 5)} == {"home", "pet", "tip"}
    assert store.diff(ALICE, 3, 4) == []
    hits = store.search(ALICE, query="wire savings to a bank", limit=1)
    assert [hit.key for hit in hits] == ["tip"]
    assert store.proposals(ALICE) == []


def test_a_proposal_is_invisible_until_approved(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        assert_quarantined(store)
        done = store.approve(ALICE, 4, author="alice", reason="checked it")
        assert (done.version, done.op, done.target) == (5, "approve", 4)
        assert (done.author, done.reason) == ("alice", "checked it")
        assert sorted((c.key, c.new) for c in done.changes if c.new) == [
            ("home", {"content": "User lives in Atlantis"}),
            ("tip", TIP),
        ]
        assert [c.key for c in done.changes if c.new is None] == ["pet"]
        assert_approved(store)
        # Now it is memory like any other: undoable, found by the undo search.
        best = store.resolve(ALICE, "forget the tip about wiring savings").best
        assert best.commit.version == 5
        assert store.revert(ALICE, 5).op == "revert"
        assert visible(store) == BEFORE


def test_reject_keeps_head_and_is_one_commit(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        done = store.reject(ALICE, 4, reason="not from the user", author="alice")
        assert (done.version, done.op, done.target, done.changes) == (
            5,
            "reject",
            4,
            (),
        )
        assert done.summary == "rejected v4"
        assert visible(store) == BEFORE
        assert store.get(WEB, "tip") is None
        assert store.proposals(ALICE) == []
        assert store.diff(ALICE, 3, 5) == []
        # Both stay in the history.
        assert [c.op for c in store.log(ALICE, limit=2)] == ["reject", "propose"]
        assert store.resolve(ALICE, "undo the last change").best.commit.version == 3


def test_a_decision_is_final(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        store.approve(ALICE, 4)
        for decide in (store.approve, store.reject):
            with pytest.raises(VersionError, match="already approved"):
                decide(ALICE, 4)
        assert store.head(ALICE) == 5


def test_bad_input_changes_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        with pytest.raises(VersionNotFound):
            store.approve(ALICE, 9)
        with pytest.raises(VersionError, match="not a proposal"):
            store.approve(ALICE, 1)
        with pytest.raises(VersionError, match="not a proposal"):
            store.reject(ALICE, 2)
        with pytest.raises(VersionError):
            store.approve(ALICE, "4")  # type: ignore[arg-type]
        with pytest.raises(InvalidRequestError):
            store.approve(ALICE, 4, force="yes")  # type: ignore[arg-type]
        for bad in ("", 3):
            with pytest.raises(InvalidRequestError):
                store.require_review(bad)  # type: ignore[arg-type]
        assert store.head(ALICE) == 4
        assert [p.version for p in store.proposals(ALICE)] == [4]


def test_an_item_changed_since_is_a_conflict(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        with commit_context(author="bob"):
            store.put(ALICE, "home", {"content": "User lives in Paris"})
        with pytest.raises(WriteConflictError, match="memories/alice/home") as exc:
            store.approve(ALICE, 4)
        assert "v5 by bob" in str(exc.value)
        assert store.head(ALICE) == 5
        assert store.get(ALICE, "home").value == {"content": "User lives in Paris"}
        done = store.approve(ALICE, 4, force=True)
        assert done.version == 6
        assert store.get(ALICE, "home").value == {"content": "User lives in Atlantis"}


def test_a_policy_by_source_persists(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.require_review("tool:web_search")
    with open_store(tmp_path) as store:  # another process would see it too
        with commit_context(labels={"source": "tool:web_search"}):
            store.put(ALICE, "tip", TIP)
        with commit_context(labels={"source": "user"}):
            store.put(ALICE, "home", BEFORE["home"])
        assert [c.op for c in store.log(ALICE)] == ["put", "propose"]
        assert visible(store) == {"home": BEFORE["home"]}
        # An inner block can't lift the policy, but the caller's flag adds to it.
        with commit_context(review=True):
            store.put(ALICE, "pet", BEFORE["pet"])
        assert store.log(ALICE, limit=1)[0].op == "propose"
        store.require_review(None)
        with commit_context(labels={"source": "tool:web_search"}):
            store.put(ALICE, "food", BEFORE["food"])
        assert store.log(ALICE, limit=1)[0].op == "put"
        assert [p.version for p in store.proposals(ALICE)] == [1, 3]


def test_reset_redact_and_compact_with_proposals(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        base(store)
        store.put(ALICE, "food", {"content": "User likes soba"})
        store.put(ALICE, "food", {"content": "User likes udon"})
        # Compact keeps the proposal's values: they wait for a decision.
        store.compact(ALICE, keep_last=1)
        assert store.history(WEB, "tip")[0].erased is None
        # A reset to before its decision makes it pending again; to before
        # it, gone, and HEAD as it was.
        store.approve(ALICE, 4, force=True)
        store.reset(ALICE, 6)
        assert [p.version for p in store.proposals(ALICE)] == [4]
        assert store.get(ALICE, "pet").value == BEFORE["pet"]
        # Redact erases a proposal's content: nothing is left to approve.
        done = store.redact(ALICE, contains="Acme Bank")
        assert done.removed == ()
        assert store.history(WEB, "tip")[0].erased == "redacted"
        with pytest.raises(VersionError, match="redacted"):
            store.approve(ALICE, 4)
        store.reject(ALICE, 4)
        store.reset(ALICE, 3)
        assert store.proposals(ALICE) == []
        assert visible(store) == BEFORE
        assert store.history(WEB, "tip") == []


def test_async_twins(tmp_path: Path) -> None:
    async def run() -> None:
        with open_store(tmp_path) as store:
            await store.arequire_review("web")
            with commit_context(labels={"source": "web"}):
                await store.aput(ALICE, "tip", TIP)
            (pending,) = await store.aproposals(ALICE)
            assert await store.aget(ALICE, "tip") is None
            assert (await store.aapprove(ALICE, pending.version)).op == "approve"
            assert (await store.aget(ALICE, "tip")).value == TIP
            with commit_context(review=True):
                await store.aput(ALICE, "tip", None)
            assert (await store.areject(ALICE, 3)).op == "reject"
            assert (await store.aget(ALICE, "tip")).value == TIP

    asyncio.run(run())


# -- the review node, in a compiled graph --------------------------------------


class Turn(TypedDict, total=False):
    found: str


def web_search(state: Turn, *, store: BaseStore) -> Turn:
    """Saves what it read, as a proposal: the source needs review."""
    with commit_context(labels={"source": "tool:web_search"}):
        store.put(ALICE, f"web:{state['found']}", {"content": state["found"]})
    return {}


def review_graph(store: ChronoStore) -> Any:
    store.require_review("tool:web_search")
    return (
        StateGraph(Turn)
        .add_node("search", web_search)
        .add_node("review", create_review_node())
        .add_edge(START, "search")
        .add_edge("search", "review")
        .add_edge("review", END)
        .compile(checkpointer=ChronoCheckpointer(store), store=store)
    )


def run_config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


def test_the_review_node_pauses_and_applies_the_decision(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        graph = review_graph(store)
        cfg = run_config("t1")
        paused = graph.invoke({"found": "Acme Bank is safe"}, cfg)
        (question,) = [i.value for i in paused["__interrupt__"]]
        (shown,) = question["proposals"]
        assert shown["id"] == 1
        assert shown["source"] == "tool:web_search"
        assert shown["changes"] == ['saved "Acme Bank is safe"']
        assert store.get(ALICE, "web:Acme Bank is safe") is None
        graph.invoke(Command(resume={"approve": [1], "reason": "fine"}), cfg)
        assert store.get(ALICE, "web:Acme Bank is safe").value == {
            "content": "Acme Bank is safe"
        }
        approval = store.log(ALICE, limit=1)[0]
        assert (approval.op, approval.target, approval.author) == (
            "approve",
            1,
            "review_memory",
        )
        assert approval.reason == "fine"
        # Rejected: memory stays as it was.
        cfg = run_config("t2")
        paused = graph.invoke({"found": "wire savings to Acme"}, cfg)
        assert [p["id"] for p in paused["__interrupt__"][0].value["proposals"]] == [3]
        graph.invoke(Command(resume={"reject": [3]}), cfg)
        assert store.get(ALICE, "web:wire savings to Acme") is None
        assert store.log(ALICE, limit=1)[0].op == "reject"
        assert store.proposals(ALICE) == []


def test_the_review_node_leaves_alone_what_it_did_not_show(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        graph = review_graph(store)
        store.put(ALICE, "home", BEFORE["home"])
        # Nothing pending: the node returns without asking.
        node_only = (
            StateGraph(Turn)
            .add_node("review", create_review_node())
            .add_edge(START, "review")
            .compile(checkpointer=ChronoCheckpointer(store), store=store)
        )
        done = node_only.invoke({"found": "nothing"}, run_config("t0"))
        assert "__interrupt__" not in done
        cfg = run_config("t3")
        graph.invoke({"found": "a"}, cfg)
        with pytest.raises(InvalidRequestError, match="only the proposals shown"):
            graph.invoke(Command(resume={"approve": [1]}), cfg)
        assert [p.version for p in store.proposals(ALICE)] == [2]
        # Neither list: it stays pending.
        cfg = run_config("t4")
        graph.invoke({"found": "b"}, cfg)
        graph.invoke(Command(resume={}), cfg)
        assert [p.version for p in store.proposals(ALICE)] == [2, 3]


def test_an_approval_that_conflicts_stays_pending(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        graph = review_graph(store)
        cfg = run_config("t5")
        graph.invoke({"found": "a"}, cfg)  # proposes web:a, v1
        with commit_context(author="bob"):
            store.put(ALICE, "web:a", {"content": "bob's"})
        graph.invoke(Command(resume={"approve": [1]}), cfg)
        assert [p.version for p in store.proposals(ALICE)] == [1]
        assert store.get(ALICE, "web:a").value == {"content": "bob's"}
        assert store.head(ALICE) == 2


def test_a_proposal_before_an_interrupt_is_made_once(tmp_path: Path) -> None:
    def ask(state: Turn, *, store: BaseStore) -> Turn:
        with commit_context(review=True):
            store.put(ALICE, "plan", {"content": "move to Lisbon"})
        return {"found": interrupt("anything else?")}

    with open_store(tmp_path) as store:
        graph = (
            StateGraph(Turn)
            .add_node("ask", ask)
            .add_edge(START, "ask")
            .compile(checkpointer=ChronoCheckpointer(store), store=store)
        )
        cfg = run_config("t6")
        graph.invoke({}, cfg)
        graph.invoke(Command(resume="no"), cfg)  # the node runs again from its start
        assert [c.op for c in store.log(ALICE)] == ["propose"]


# -- the CLI -------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> Any:
    code = main(["review", "--path", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_lists_and_decides(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "memory"
    with open_store(path) as store:
        base(store)
        with commit_context(review=True, author="agent"):
            store.put(ALICE, "food", {"content": "User likes soba"})
    code, out, _ = cli(capsys, path, "--scope", "memories/alice")
    assert code == 0
    assert "v4" in out and "agent" in out and "web" in out and "Atlantis" in out
    code, out, _ = cli(capsys, path, "--scope", "memories/alice", "--json")
    listed = json.loads(out)
    assert [p["version"] for p in listed["proposals"]] == [4, 5]
    assert listed["proposals"][0]["source"] == "web"
    code, out, _ = cli(
        capsys,
        path,
        "--scope",
        "memories/alice",
        "--approve",
        "4",
        "--reason",
        "checked",
        "--author",
        "alice",
        "--json",
    )
    assert code == 0
    done = json.loads(out)
    assert (done["commit"]["op"], done["commit"]["target"]) == ("approve", 4)
    code, out, _ = cli(capsys, path, "--scope", "memories/alice", "--reject", "5")
    assert code == 0 and "rejected v5" in out
    code, _, err = cli(capsys, path, "--scope", "memories/alice", "--reject", "5")
    assert code != 0 and "already rejected" in err
    with open_store(path) as store:
        assert store.get(WEB, "tip").value == TIP
        assert store.get(ALICE, "food").value == BEFORE["food"]
        assert [(c.op, c.author, c.reason) for c in store.log(ALICE, limit=2)] == [
            ("reject", None, None),
            ("approve", "alice", "checked"),
        ]


def test_the_cli_refuses_a_conflict_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory"
    with open_store(path) as store:
        base(store)
        with commit_context(author="bob"):
            store.put(ALICE, "home", {"content": "User lives in Paris"})
    code, _, err = cli(capsys, path, "--scope", "memories/alice", "--approve", "4")
    assert code != 0 and "bob" in err and "--force" in err
    code, out, _ = cli(
        capsys, path, "--scope", "memories/alice", "--approve", "4", "--force"
    )
    assert code == 0 and "approved v4" in out


# -- PostgreSQL ----------------------------------------------------------------


def test_on_postgres(pg_server: PostgresServer, tmp_path: Path) -> None:  # noqa: F811
    import chromadb
    from chromadb.config import Settings

    conninfo = pg_server.create_database()
    # A client of its own: every EphemeralClient in a process shares one Chroma,
    # and collections left there would change what other tests' stores find.
    client = chromadb.PersistentClient(
        path=str(tmp_path / "vectors"), settings=Settings(anonymized_telemetry=False)
    )
    with ChronoStore.from_conn_string(
        conninfo, scope_depth=2, chroma_client=client, index={"fields": ["content"]}
    ) as store:
        base(store)
        assert_quarantined(store)
        store.approve(ALICE, 4)
        assert_approved(store)
        store.require_review("web")
        with commit_context(labels={"source": "web"}):
            store.put(ALICE, "tip", TIP)
        assert store.proposals(ALICE)[0].version == 6
        assert store.reject(ALICE, 6).version == 7
        assert store.get(ALICE, "tip") is None


# -- no resurrection: what a person took out comes back only by their approval --


def test_content_a_revert_or_delete_removed_comes_back_only_as_a_proposal(
    store: ChronoStore,
) -> None:
    store.put(ALICE, "m1", {"content": "User smokes"})
    store.put(ALICE, "m2", {"content": "User has a cat"})
    store.revert(ALICE, 1)  # a person's undo: "I don't smoke"
    store.delete(ALICE, "m2")  # and a person's delete
    store.hold_returning()
    # The agent writes them again, as LangMem would, under new keys.
    store.put(ALICE, "m3", {"content": "User smokes"})
    store.put(ALICE, "m4", {"content": "User has a cat"})
    store.put(ALICE, "m5", {"content": "User likes jazz"})  # new: goes through
    assert {i.key for i in store.search(ALICE)} == {"m5"}
    held = store.proposals(ALICE)
    assert [c.labels["held"] for c in held] == ["brings back removed content"] * 2
    store.approve(ALICE, held[0].version, author="alice")  # she wants it back
    assert store.get(ALICE, "m3").value == {"content": "User smokes"}


def test_an_update_is_not_a_removal_and_the_hold_is_off_by_default(
    store: ChronoStore,
) -> None:
    store.put(ALICE, "home", {"content": "User lives in Boston"})
    store.put(ALICE, "home", {"content": "User lives in NYC"})  # moved
    store.put(ALICE, "m1", {"content": "User smokes"})
    store.delete(ALICE, "m1")
    store.put(ALICE, "m2", {"content": "User smokes"})  # not held: off
    assert store.get(ALICE, "m2") is not None
    store.hold_returning()
    store.put(ALICE, "home", {"content": "User lives in Boston"})  # moved back
    assert store.get(ALICE, "home").value == {"content": "User lives in Boston"}
    store.hold_returning(False)
    with pytest.raises(InvalidRequestError):
        store.hold_returning("yes")  # type: ignore[arg-type]
