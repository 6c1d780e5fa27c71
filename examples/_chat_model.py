"""The chat model the examples run with: scripted and offline by default, or a real
one chosen with `--model provider:name` (or `CHRONOMEM_EXAMPLE_MODEL`).

`ScriptedChatModel` is a deterministic stand-in for an LLM: it binds tools like a
real chat model and answers each user message with the tool calls and the reply
the script gives for that message, so the same graph runs with either model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

MODEL_ENV = "CHRONOMEM_EXAMPLE_MODEL"
_MEMORY_LINE = re.compile(r"^- (\w+): (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Turn:
    """The model's part of one turn: tool calls first (if any), then `reply`.

    `reply` may name `{memory keys}`, filled from the `- key: value` lines of the
    system prompt: what the graph read from memory for this reply.
    """

    reply: str
    calls: Sequence[tuple[str, dict[str, Any]]] = field(default=())


class _Facts(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return f"(no {key} remembered)"


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays `script`, keyed on the user's latest message."""

    script: dict[str, Turn]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Check that the script only calls these tools; the model stays the same."""
        names = {convert_to_openai_tool(t)["function"]["name"] for t in tools}
        unknown = {n for t in self.script.values() for n, _ in t.calls} - names
        if unknown:
            raise ValueError(f"the script calls unbound tools: {sorted(unknown)}")
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
        turn = self.script.get(text, Turn(f"(the script has no turn for {text!r})"))
        if turn.calls and isinstance(messages[-1], HumanMessage):  # act, then reply
            calls = [
                tool_call(name=name, args=args, id=f"call_{len(messages)}_{i}")
                for i, (name, args) in enumerate(turn.calls)
            ]
            message = AIMessage(content="", tool_calls=calls)
        else:
            prompt = "\n".join(m.text for m in messages if isinstance(m, SystemMessage))
            facts = _Facts(_MEMORY_LINE.findall(prompt))
            message = AIMessage(content=turn.reply.format_map(facts))
        return ChatResult(generations=[ChatGeneration(message=message)])


def choose_model(spec: str | None, script: Mapping[str, Turn]) -> BaseChatModel:
    """`init_chat_model(spec)` for "provider:name" (else `$CHRONOMEM_EXAMPLE_MODEL`);
    without either, the scripted model, which never touches the network."""
    spec = spec or os.environ.get(MODEL_ENV)
    if not spec:
        return ScriptedChatModel(script=dict(script))
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as error:
        raise SystemExit(
            f"--model {spec} needs LangChain: pip install langchain and the "
            "provider's package (e.g. langchain-openai), and set its API key "
            "(e.g. OPENAI_API_KEY); or drop --model to run the scripted model"
        ) from error
    model: BaseChatModel = init_chat_model(spec)
    return model


def parse_args(doc: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """The examples' options: `--path` and `--model`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(
        "--path", help="store directory, kept (default: a temporary one, deleted)"
    )
    parser.add_argument(
        "--model",
        help=f"a real chat model, e.g. openai:gpt-4o-mini (default: ${MODEL_ENV}, "
        "else the offline scripted model)",
    )
    return parser.parse_args(argv)


@contextlib.contextmanager
def store_dir(path: str | None) -> Iterator[str]:
    """`path` as given, or a temporary directory deleted when the example ends."""
    if path:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="chronomem-example-") as temporary:
        yield temporary
