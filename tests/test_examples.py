"""The examples run offline with the scripted model and do what they say."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from langgraph_chronomem import ChronoStore, models

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# Every script a user may run; server_graph.py is a module `langgraph dev` loads
# (tests/test_server.py and tests/test_server_undo.py run it there).
SCRIPTS = sorted(
    p.name for p in EXAMPLES.glob("[!_]*.py") if p.name != "server_graph.py"
)
NO_RERANK = "with no cross-encoder rerank"
# What the no-rerank warning said before on machines no download can help.
DOWNLOAD_ADVICE = re.compile(
    r"\b(let|allow)\b[^.]*\bdownload|download[^.]*\bonce\b", re.I
)
ALICE, BOB, CAROL = (("memories", user) for user in ("alice", "bob", "carol"))


Load = Callable[[str], ModuleType]


@pytest.fixture
def examples(monkeypatch: pytest.MonkeyPatch) -> Load:
    """Import the examples as their scripts do (from examples/), scripted model."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.delenv("CHRONOMEM_EXAMPLE_MODEL", raising=False)

    return importlib.import_module


def _ops(store: ChronoStore, scope: tuple[str, str]) -> list[tuple[str, str | None]]:
    return [(c.op, c.author) for c in store.log(scope)]


def _turn(out: str, said: str) -> str:
    """The transcript of the turn that begins with `said`, to the next blank line."""
    return out.split(f"{said}\n", 1)[1].split("\n\n", 1)[0]


def test_chat_agent_undoes_the_wrong_memory_only(
    examples: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert examples("chat_agent").main(["--path", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    undo = _turn(out, "alice: I never moved to NYC, my sister did. Undo that.")
    assert undo.splitlines() == [
        "  -> undo_memory(request='undo my move to NYC')",
        '  <- Memory changed (now v5): changed "NYC" -> "Boston". To reverse it, call '
        "undo_memory with request 'redo'.",
        "agent: Sorry about that! You live in Boston again.",  # read from memory
    ]
    assert "agent: You live in Boston and work as a nurse." in out  # read from memory
    history = _turn(out, "alice: Where did you think I lived before?")
    date = r"\d{4}-\d{2}-\d{2}"  # the history tool's lines, with the change ids
    assert re.search(
        rf'^ +- \[3\.1\] {date}: changed "Boston" -> "NYC"$', history, re.M
    )
    assert re.search(rf'^ +- \[1\.1\] {date}: saved "Boston"$', history, re.M)
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        assert store.get(ALICE, "home").value == {"content": "Boston"}
        assert store.get(ALICE, "job").value == {"content": "nurse"}  # kept: a revert
        assert store.get(ALICE, "pet").value == {"content": "a cat called Tom"}
        assert _ops(store, ALICE)[0] == ("revert", "undo_memory")
        assert store.show(ALICE, 5).target == 3  # the wrong save, and only it
        assert store.head(ALICE) == 5


def test_prebuilt_agent_undoes_only_what_the_person_approves(
    examples: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert examples("prebuilt_agent").main(["--path", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    cat = _turn(out, "alice: Forget my cat.")
    assert cat.splitlines()[1:3] == [
        "  ?? the person rejects undo_memory",
        "  <- User rejected the tool call for `undo_memory` with reason: The person "
        "said no: keep that memory.",
    ]
    undo = _turn(out, "alice: I never moved to NYC, my sister did. Undo that.")
    assert undo.splitlines() == [
        "  -> undo_memory(request='undo my move to NYC')",
        "  ?? the person approves undo_memory",
        '  <- Memory changed (now v4): changed "NYC" -> "Boston". To reverse it, call '
        "undo_memory with request 'redo'.",
        "agent: Sorry about that! You live in Boston again.",  # read from memory
    ]
    history = _turn(out, "alice: Where did you think I lived before?")
    date = r"\d{4}-\d{2}-\d{2}"  # the history tool's lines, with the change ids
    assert re.search(
        rf'^ +- \[3\.1\] {date}: changed "Boston" -> "NYC"$', history, re.M
    )
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        assert _ops(store, ALICE) == [
            ("revert", "undo_memory"), ("put", None), ("put", None), ("put", None)
        ]  # fmt: skip
        assert store.show(ALICE, 4).target == 3  # the wrong save, and only it
        assert store.get(ALICE, "pet").value == {"content": "a cat called Tom"}


def test_prebuilt_agent_changes_nothing_until_the_person_answers(
    examples: Load, tmp_path: Path
) -> None:
    """The undo waits in an `interrupt()`, kept by the checkpointer; a reject
    after it leaves memory as it was."""
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command

    from langgraph_chronomem import open_chronomem

    agent_module = examples("prebuilt_agent")
    model = examples("_chat_model").ScriptedChatModel(script=agent_module.CONVERSATION)
    store, checkpointer = open_chronomem(tmp_path, scope_depth=2)
    with store:
        agent = agent_module.build_agent(model, store, checkpointer)
        alice = {"configurable": {"user_id": "alice", "thread_id": "t"}}
        for said in ("Hi! I live in Boston.", "My sister just moved to NYC!"):
            agent.invoke({"messages": [HumanMessage(said)]}, alice)
        asked = "I never moved to NYC, my sister did. Undo that."
        paused = agent.invoke({"messages": [HumanMessage(asked)]}, alice)
        (request,) = paused["__interrupt__"][0].value["action_requests"]
        assert request["name"] == "undo_memory"
        assert store.head(ALICE) == 2
        assert store.get(ALICE, "home").value == {"content": "NYC"}
        no = {"decisions": [{"type": "reject", "message": "no"}]}
        agent.invoke(Command(resume=no), alice)
        assert store.head(ALICE) == 2
        assert store.get(ALICE, "home").value == {"content": "NYC"}


def test_multi_user_undo_stays_in_its_users_timeline(
    examples: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert examples("multi_user").main(["--path", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    bob = _turn(out, "bob: Actually I didn't move. Undo my move to Milan.")
    assert '  <- Memory changed (now v3): changed "Milan" -> "Rome".' in bob
    carol = _turn(out, "carol: Undo my move to Milan.")
    (reply,) = [line for line in carol.splitlines() if line.startswith("  <- ")]
    assert reply.startswith("  <- Nothing changed: ")
    assert "Milan" not in reply and "Rome" not in reply  # bob's history is not hers
    assert "alice: Where do I live?\nagent: You live in Boston." in out
    assert "bob: Where do I live?\nagent: You live in Rome." in out
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        assert _ops(store, ALICE) == [("put", None), ("put", None)]
        assert _ops(store, BOB) == [
            ("revert", "undo_memory"),
            ("put", None),
            ("put", None),
        ]
        assert _ops(store, CAROL) == [("put", None), ("put", None)]
        assert store.as_of(BOB, 2).get(BOB, "home").value == {"content": "Milan"}
        everyone = store.search(("memories",), limit=100)
        assert {item.namespace for item in everyone} == {ALICE, BOB, CAROL}
        assert len(everyone) == 5


def test_the_readme_demo_undoes_the_move_and_keeps_the_cat(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py"), "--path", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "user: 'undo the update about my move to New York'" in lines
    assert any(line.startswith("  decision: act (sure: ") for line in lines)
    assert (
        "store: undid change 2.1 (updated memories/alice/home: Boston -> New York): "
        "reverted as v4: updated memories/alice/home: New York -> Boston. To redo, "
        "roll back to v3."
    ) in lines
    assert "agent now says: You live in Boston." in lines
    assert "the cat is still there: {'pet': 'cat named Tom'}" in lines
    assert "redo (rollback to v3): {'city': 'New York'}" in lines
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        assert [c.op for c in store.log(ALICE)] == [
            "rollback", "revert", "put", "put", "put"
        ]  # fmt: skip


def test_time_travel_runs_as_a_script(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CHRONOMEM_EXAMPLE_MODEL"}
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "time_travel.py"), "--path", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    first = "You live in Boston; pet: (no pet remembered)."
    assert f"agent (replayed): {first}" in lines  # rewound: sees what it saw
    # the default reverts thread t1's own move; the dog, said in t2, stays
    assert "agent (replayed): You live in Boston; pet: a dog named Rex." in lines
    assert "agent (replayed): You live in Lisbon; pet: a dog named Rex." in lines
    with ChronoStore.from_path(tmp_path / "revert", scope_depth=2) as store:
        # put x3 (the dog from thread t2), the replay's revert of t1's move,
        # then the example's undo of it
        assert _ops(store, ALICE) == [
            ("rollback", None),
            ("revert", "time-travel"),
            ("put", None),
            ("put", None),
            ("put", None),
        ]
        travel = store.show(ALICE, 4)
        assert travel.labels["thread_id"] == "t1"
        assert [(c.key, c.new) for c in travel.changes] == [
            ("home", {"content": "Boston"})
        ]
        assert store.get(ALICE, "home").value == {"content": "Lisbon"}
    with ChronoStore.from_path(tmp_path / "rewind", scope_depth=2) as store:
        assert _ops(store, ALICE)[1] == ("rollback", "time-travel")
        assert store.show(ALICE, 4).target == 1
    with ChronoStore.from_path(tmp_path / "keep", scope_depth=2) as store:
        assert store.log(ALICE, author="time-travel") == []


def test_edit_a_message_memory_follows_the_line_the_thread_is_on(
    examples: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert examples("edit_a_message").main(["--path", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rex, nurse = "pet=a dog called Rex", "job=nurse"
    assert f"memory at the fork (v4): {rex}" in lines  # t1's Boston, Paris undone
    assert f"memory on the edited line (v5): home=Lisbon, {rex}" in lines
    # switching lines: memory is what the line wrote; t2's dog and alice's own
    # write (no thread) stay
    assert f"memory on the first line (v8): home=Rome, {nurse}, {rex}" in lines
    assert f"memory on the edited line (v9): home=Lisbon, {nurse}, {rex}" in lines
    assert f"memory on the first line (v10): home=Rome, {nurse}, {rex}" in lines
    assert [line for line in lines if line.startswith("agent: You live in")] == [
        "agent: You live in Paris; pet: a dog called Rex; job: nurse.",
        "agent: You live in Lisbon; pet: a dog called Rex; job: nurse.",
        "agent: You live in Rome; pet: a dog called Rex; job: nurse.",
    ]  # read from memory by the graph, on each line
    with ChronoStore.from_path(tmp_path, scope_depth=2) as store:
        travels = store.log(ALICE, author="time-travel")
        assert [c.version for c in travels] == [10, 9, 7, 4]
        assert {c.labels["thread_id"] for c in travels} == {"t1"}
        homes = [store.as_of(ALICE, v).get(ALICE, "home") for v in (4, 7, 9, 10)]
        assert [h and h.value["content"] for h in homes] == [
            None, "Paris", "Lisbon", "Rome"
        ]  # fmt: skip


def test_a_real_model_without_langchain_says_what_to_install(
    examples: Load, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("langchain", "langchain.chat_models"):  # import fails, even
        monkeypatch.setitem(sys.modules, module, None)  # after another test's
    monkeypatch.setenv("CHRONOMEM_EXAMPLE_MODEL", "openai:gpt-4o-mini")
    chat_model = examples("_chat_model")
    with pytest.raises(SystemExit, match="pip install langchain"):
        chat_model.choose_model(None, {})


def test_the_scripted_model_refuses_a_script_calling_unbound_tools(
    examples: Load,
) -> None:
    chat_model = examples("_chat_model")
    model = chat_model.ScriptedChatModel(
        script={"hi": chat_model.Turn("hello", [("forget", {})])}
    )
    with pytest.raises(ValueError, match="unbound tools: \\['forget'\\]"):
        model.bind_tools([])


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_example_runs_offline_says_so_once_and_leaves_nothing(
    script: str, tmp_path: Path
) -> None:
    """As CI runs them (offline, no FlashRank model cached): the no-rerank notice
    comes at most once, advises no download, and the temporary store is gone."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CHRONOMEM_EXAMPLE_MODEL"}
    env.update(
        CHRONOMEM_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        CHRONOMEM_MODELS_DIR=str(models.models_dir()),
        XDG_CACHE_HOME=str(tmp_path / "cache"),  # no cross-encoder there
        TMPDIR=str(scratch),
    )
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.count(NO_RERANK) <= 1, run.stderr
    assert not DOWNLOAD_ADVICE.search(run.stderr), run.stderr
    assert list(scratch.iterdir()) == []
