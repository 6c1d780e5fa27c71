"""Namespace templates: `("memories", "{user_id}")`, filled from each run's config.

The developer writes the template; the values come from the run, never from a
model's tool arguments, so an agent can only reach the namespace its run was
configured for.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from langgraph_chronomem.errors import ConfigError

__all__ = ["NamespaceTemplate"]

# The LangGraph server sets these to the authenticated user's identity, which is
# "" without auth (as under `langgraph dev`); a client may send its own user_id,
# never langgraph_auth_user_id. What to do when one of them comes empty:
_SERVER_FIXES = {
    "user_id": "pass user_id with each run, config={'configurable': "
    "{'user_id': 'alice'}}, or configure auth in langgraph.json",
    "langgraph_auth_user_id": "configure auth in langgraph.json",
}


def _empty_hint(key: str) -> str:
    """Why `key` may have come empty from the LangGraph server, and the fix."""
    fix = _SERVER_FIXES.get(key)
    if fix is None:
        return ""
    return (
        f"; the LangGraph server sets {key} to the authenticated user, which is '' "
        f"without auth (as under `langgraph dev`): {fix}"
    )


class NamespaceTemplate:
    """A namespace whose `{placeholders}` are filled in on every call.

    Values come from the run config's `configurable`, else from the graph's
    context (a mapping or an object with attributes). Each must be a non-empty
    string without dots, so no value can reach into another namespace.

        >>> template = NamespaceTemplate(("memories", "{user_id}"))
        >>> template({"configurable": {"user_id": "alice"}})
        ('memories', 'alice')
        >>> template({"configurable": {"thread_id": "t1"}})
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.ConfigError: namespace ('memories', '{user_id}') needs 'user_id' in the run's configurable or context; available: thread_id

    An empty value is refused with what to do (the LangGraph server sends
    `user_id=''` when no auth is configured):

        >>> template({"configurable": {"user_id": ""}})
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.ConfigError: namespace value user_id='' must be a non-empty string without '.'; the LangGraph server sets user_id to the authenticated user, which is '' without auth (as under `langgraph dev`): pass user_id with each run, config={'configurable': {'user_id': 'alice'}}, or configure auth in langgraph.json

    Raises:
        ConfigError: For a malformed template (at creation), or a missing or
            invalid value (when filled).
    """  # noqa: E501

    def __init__(self, template: Sequence[str]) -> None:
        if isinstance(template, str) or not template:
            raise ConfigError(f"a namespace is a tuple of labels, not {template!r}")
        self.template = tuple(template)
        self.keys: dict[str, int] = {}  # placeholder -> the first label holding it
        for index, label in enumerate(self.template):
            try:
                parsed = list(string.Formatter().parse(label))
            except (TypeError, ValueError) as error:
                raise ConfigError(f"bad namespace label {label!r}: {error}") from error
            for _, key, spec, conversion in parsed:
                if key is not None and (not key.isidentifier() or spec or conversion):
                    raise ConfigError(f"bad placeholder in {label!r}: use '{{name}}'")
                if key is not None:
                    self.keys.setdefault(key, index)

    def __call__(
        self, config: RunnableConfig | None = None, context: Any = None
    ) -> tuple[str, ...]:
        """The namespace for this run (`config` defaults to the current run's)."""
        configurable = (config or ensure_config()).get("configurable") or {}
        # The graph's context: a mapping, or an object (dataclass, pydantic model).
        from_context = (
            context
            if isinstance(context, Mapping)
            else getattr(context, "__dict__", {})
        )
        values: dict[str, str] = {}
        for key in self.keys:
            value = configurable.get(key, from_context.get(key))
            if value is None:
                known = [*configurable, *from_context]
                available = sorted(str(k) for k in known if not str(k).startswith("_"))
                raise ConfigError(
                    f"namespace {self.template} needs {key!r} in the run's configurable"
                    f" or context; available: {', '.join(available) or 'none'}"
                )
            if not isinstance(value, str) or not value or "." in value:
                raise ConfigError(
                    f"namespace value {key}={value!r} must be a non-empty string "
                    "without '.'" + (_empty_hint(key) if value == "" else "")
                )
            values[key] = value
        return tuple(label.format_map(values) for label in self.template)
