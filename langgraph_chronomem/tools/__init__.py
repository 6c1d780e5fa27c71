"""Agent tools over a `ChronoStore`: undo memory in words, look up its history,
revert what one source wrote, and review proposals.

The namespace is a template the developer writes; its `{placeholders}` are filled
from each run's config, so a user can only ever reach their own timeline:

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
    >>> store.put(("memories", "alice"), "home", {"content": "User lives in Boston"})
    >>> store.put(("memories", "alice"), "home", {"content": "User lives in Paris"})
    >>> undo = create_undo_memory_tool(("memories", "{user_id}"), store=store)
    >>> config = {"configurable": {"user_id": "alice"}}
    >>> print(undo.invoke({"request": "forget that I live in Paris"}, config))
    Memory changed (now v3): changed "User lives in Paris" -> "User lives in Boston". To reverse it, call undo_memory with request 'redo'.
    >>> store.get(("memories", "alice"), "home").value
    {'content': 'User lives in Boston'}
    >>> store.close()

Unless sure of the match, it changes nothing and lists candidates with change ids.
In a graph the tools find the store through LangGraph's `ToolRuntime`.

Each tool is a module: `undo`, `history`, `revert` (by source or run) and
`review` (a node); `replies` words what they say and `runtime` finds the store.
"""  # noqa: E501

from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.tools.history import create_memory_history_tool
from langgraph_chronomem.tools.revert import create_revert_source_tool
from langgraph_chronomem.tools.review import create_review_node
from langgraph_chronomem.tools.undo import create_undo_memory_tool, create_undo_node

__all__ = [
    "NamespaceTemplate",
    "create_memory_history_tool",
    "create_revert_source_tool",
    "create_review_node",
    "create_undo_memory_tool",
    "create_undo_node",
]
