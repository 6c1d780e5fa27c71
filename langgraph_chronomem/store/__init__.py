"""The store: `ChronoStore`, its async twin and its read-only views.

`base` is the `BaseStore` itself (its batch path and lifecycle); the methods it
mixes in live beside it, one module per job: `opening` (from_path,
from_conn_string, from_pool), `versions` (history and time travel), `forgetting`
(redact, compact), `undo` (undo in words), `review` (proposals), `tags` and
`sweepers` (TTL and background compaction) and `branches`, all on `core`.
Beside them: op checking (`ops`), the `as_of` view (`view`), the branch view
(`branch_view`), commit labels (`context`) and the async twin (`aio`).

    >>> import tempfile
    >>> from langgraph_chronomem.store import ChronoStore
    >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
    ...     store.put(("alice",), "city", {"city": "Boston"})
    ...     store.head(("alice",))
    1
"""

from langgraph_chronomem.store.aio import AsyncChronoStore
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.store.branch_view import BranchView
from langgraph_chronomem.store.opening import DATABASE_FILE
from langgraph_chronomem.store.view import StoreView

__all__ = [
    "DATABASE_FILE",
    "AsyncChronoStore",
    "BranchView",
    "ChronoStore",
    "StoreView",
]
