"""A LangMem profile kept in a ChronoStore is one item with one version per turn,
and undo in words works on it field by field.

LangMem's background memory manager (`create_memory_store_manager`, with one
schema and `enable_inserts=False`, as its docs configure a profile) runs on its
real code paths, trustcall's extractor included; only the chat model is
scripted. The first conversation creates the profile with a `UserProfile` tool
call, later ones edit it with trustcall's JSON-patch `PatchDoc` call, so the
same key is updated in place and `log` reads as the profile's history. The
undo tool then takes back one fact of it ("forget that I'm vegetarian") and
keeps the others, whichever conversation saved them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import langmem
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.store.base import BaseStore, Item
from pydantic import BaseModel

from langgraph_chronomem import ChronoStore, create_undo_memory_tool

ANA = ("memories", "ana")
PATCH_TOOL = "PatchDoc"  # trustcall's tool for editing a document that exists


class UserProfile(BaseModel):
    name: str | None = None
    diet: str | None = None
    likes: str | None = None
    home_city: str | None = None


# What Ana says in each conversation, and the profile fields it sets.
TURNS: tuple[tuple[str, dict[str, str]], ...] = (
    (
        "I'm Ana, I love ramen and I'm vegetarian",
        {"name": "Ana", "likes": "ramen", "diet": "vegetarian"},
    ),
    ("I moved to Lisbon", {"home_city": "Lisbon"}),
    ("I've started liking dumplings too", {"likes": "ramen and dumplings"}),
)

# The profile after each turn, as LangMem stores it.
PROFILES = [
    {
        "kind": "UserProfile",
        "content": {
            "name": "Ana",
            "diet": "vegetarian",
            "likes": "ramen",
            "home_city": None,
        },
    },
    {
        "kind": "UserProfile",
        "content": {
            "name": "Ana",
            "diet": "vegetarian",
            "likes": "ramen",
            "home_city": "Lisbon",
        },
    },
    {
        "kind": "UserProfile",
        "content": {
            "name": "Ana",
            "diet": "vegetarian",
            "likes": "ramen and dumplings",
            "home_city": "Lisbon",
        },
    },
]


class ScriptedProfileModel(BaseChatModel):
    """Answers a memory extraction with the profile fields scripted for the
    conversation in the prompt: through the schema's tool when it is offered
    (no profile yet), through `PatchDoc` when trustcall asks for an edit.

    The reply depends on the prompt and the tools, never on how many calls came
    before, so it holds however often LangMem and trustcall ask."""

    script: dict[str, dict[str, str]]

    @property
    def _llm_type(self) -> str:
        return "scripted-profile"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        offered = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=offered, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(message.text for message in messages)
        offered = {tool["function"]["name"] for tool in kwargs.get("tools", [])}
        fields = self._fields_for(prompt)
        if PATCH_TOOL in offered:
            call = _patch_call(_profile_id(prompt), fields)
        elif UserProfile.__name__ in offered:
            call = _tool_call(UserProfile.__name__, fields)
        else:
            raise AssertionError(f"no scripted reply for the tools {sorted(offered)}")
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))]
        )

    def _fields_for(self, prompt: str) -> dict[str, str]:
        matches = [fields for said, fields in self.script.items() if said in prompt]
        assert len(matches) == 1, f"expected one scripted conversation in {prompt!r}"
        return matches[0]


def _tool_call(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name=name, args=args, id=f"call_{uuid.uuid4().hex}")


def _patch_call(doc_id: str, fields: dict[str, str]) -> ToolCall:
    patches = [
        {"op": "replace", "path": f"/{name}", "value": value}
        for name, value in fields.items()
    ]
    return _tool_call(
        PATCH_TOOL,
        {
            "json_doc_id": doc_id,
            "planned_edits": "Apply the new facts.",
            "patches": patches,
        },
    )


def _profile_id(prompt: str) -> str:
    """The existing profile's id in trustcall's update prompt: LangMem's hash
    of the item's namespace and key, not the store key, so it is read back."""
    found = re.findall(r'<instance id=(\S+) schema_type="UserProfile">', prompt)
    assert len(found) == 1, f"expected one existing profile in {prompt!r}"
    return str(found[0])


def only_item(store: BaseStore, scope: tuple[str, ...]) -> Item:
    items = store.search(scope, limit=10)
    assert len(items) == 1, f"expected one item under {scope}, found {items}"
    return items[0]


def tell_ana(store: ChronoStore) -> str:
    """Run the three conversations through LangMem; the profile's key."""
    manager = langmem.create_memory_store_manager(
        ScriptedProfileModel(script=dict(TURNS)),
        schemas=[UserProfile],
        enable_inserts=False,
        namespace=("memories", "{user_id}"),
        store=store,
    )
    keys = []
    for said, _ in TURNS:
        manager.invoke(
            {"messages": [{"role": "user", "content": said}]},
            config={"configurable": {"user_id": "ana"}},
        )
        keys.append(only_item(store, ANA).key)
    assert len(set(keys)) == 1, f"the profile changed keys: {keys}"
    return keys[0]


def profile_history(tmp_path: Path) -> tuple[ChronoStore, tuple[str, str], str]:
    """An open store holding Ana's profile after three conversations, the
    profile's scope and its key; the caller closes the store."""
    store = ChronoStore.from_path(tmp_path, scope_depth=2)
    try:
        return store, ANA, tell_ana(store)
    except BaseException:
        store.close()
        raise


def test_langmem_profile_manager_updates_one_item_in_place(tmp_path: Path) -> None:
    store, scope, key = profile_history(tmp_path)
    with store:
        commits = sorted(store.log(scope), key=lambda commit: commit.version)
        assert [commit.version for commit in commits] == [1, 2, 3]
        before: dict[str, Any] | None = None
        for commit, profile in zip(commits, PROFILES, strict=True):
            (change,) = commit.changes
            assert (change.namespace, change.key) == (scope, key)
            assert (change.old, change.new) == (before, profile)
            assert only_item(store.as_of(scope, commit.version), scope).value == profile
            before = profile
        current = store.get(scope, key)
        assert current is not None and current.value == PROFILES[-1]


def undo(store: ChronoStore, request: str) -> str:
    """What the undo tool replies to `request` in Ana's run."""
    tool = create_undo_memory_tool(("memories", "{user_id}"), store=store)
    reply = tool.invoke({"request": request}, {"configurable": {"user_id": "ana"}})
    return str(reply)


def profile(store: ChronoStore, key: str) -> dict[str, Any]:
    item = store.get(ANA, key)
    assert item is not None
    return dict(item.value["content"])


def test_forgetting_one_fact_of_the_profile_keeps_the_others(tmp_path: Path) -> None:
    """ "I'm vegetarian" was saved with "ramen" in the first conversation, and the
    profile changed twice since: only `diet` goes, and the reply names it."""
    store, _, key = profile_history(tmp_path)
    with store:
        reply = undo(store, "forget that I'm vegetarian")
        assert reply.startswith("Memory changed (now v4)"), reply
        assert "diet" in store.log(ANA, limit=1)[0].summary
        assert profile(store, key) == {
            "name": "Ana",
            "likes": "ramen and dumplings",
            "home_city": "Lisbon",
        }
        assert undo(store, "redo").startswith("Memory changed (now v5)")
        assert profile(store, key)["diet"] == "vegetarian"


def test_a_field_changed_in_place_is_undone_alone(tmp_path: Path) -> None:
    """The move (conversation 2) is undone after dumplings were added (3):
    `home_city` goes back to what LangMem held before, `likes` stays."""
    store, _, key = profile_history(tmp_path)
    with store:
        reply = undo(store, "forget that I moved to Lisbon")
        assert reply.startswith("Memory changed"), reply
        now = profile(store, key)
        assert now["home_city"] is None and now["likes"] == "ramen and dumplings"


def test_a_field_is_named_by_its_change_id(tmp_path: Path) -> None:
    """The agent that was offered "1.1/diet" acts on it by id; a field the
    change did not set names no change."""
    store, _, key = profile_history(tmp_path)
    with store:
        assert undo(store, "1.1/diet").startswith("Memory changed"), key
        assert "diet" not in profile(store, key)
        assert undo(store, "2.1/diet").startswith("Nothing changed")
