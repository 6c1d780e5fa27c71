"""A request as said, written plainly: typographic quotes and dashes, chat
spellings and an agent's spellings of a call read as a person would say them.

    >>> plainly('undo_memory(request="forget my gym note")')
    'forget my gym note'
    >>> plainly("can u forgt my address")
    'can you forget my address'
"""

from __future__ import annotations

import contextlib
import json
import re

from langgraph_chronomem.search.phrasing import commands, nothing, spelling
from langgraph_chronomem.search.words import content_words

__all__ = ["plainly"]


def _said_in(value: object) -> str | None:
    """The request inside an agent's JSON: `{"request": ...}`, `{"action":
    "forget", "target": ...}`, at any depth."""
    if not isinstance(value, dict):
        return None
    for key in ("request", "query", "text"):
        if isinstance(value.get(key), str):
            return str(value[key])
    action, target = value.get("action"), value.get("target") or value.get("memory")
    if isinstance(action, str) and isinstance(target, str):
        return f"{action} {target}"
    return next(filter(None, map(_said_in, value.values())), None)


def _asked_of(tool: str, said: str) -> str:
    """What a call of an undo tool asks: its request, or, when that only names a
    memory ("user lives in Austin"), forgetting it."""
    undoing = re.search(r"(?i)undo|delete|forget|remove|erase", tool)
    names = (
        content_words(said)
        and not said.rstrip().endswith("?")
        and not nothing.NOTHING.match(said.strip())
    )
    return (
        f"forget {said}"
        if undoing and names and not commands.COMMAND.search(said)
        else said
    )


_LINE_BREAK = re.compile(r"(?<![.!?;:,\s])[ \t]*\n\s*")


def plainly(text: str) -> str:
    """`text` with typographic quotes and dashes made plain, chat spellings
    ("can u", "dont") written out, and an agent's spellings read as said:
    "delete_memory: X" as "delete X", `undo_memory(request="X")` and
    `{"request": "X"}` as X. A message sent in lines is read as sentences:
    "sales were wild this week\nforget the launch note" asks in its second."""
    text = _LINE_BREAK.sub(". ", text.translate(spelling.PLAIN).strip())
    called = spelling.CALLED.match(text)
    if called:
        text = _asked_of(called["tool"], called["said"])
    elif text.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            value = json.loads(text)
            said = _said_in(value)
            tool = (
                value.get("tool") or value.get("name")
                if isinstance(value, dict)
                else None
            )
            text = text if said is None else _asked_of(str(tool or ""), said)
    text = spelling.CALL.sub(lambda m: m[1] or m[2], text)
    text = spelling.BACK_2.sub(r"\1 to ", text)  # "go back 2 when ..."
    text = spelling.MIND_NOT.sub("stop ", spelling.COURTESY.sub("", text))
    return spelling.CHAT_WORD.sub(lambda m: spelling.CHAT[m.group().lower()], text)
