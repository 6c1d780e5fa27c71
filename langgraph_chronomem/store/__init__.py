"""The store: `ChronoStore`, its async twin and its read-only views.

`base` is the `BaseStore` itself; the version-control methods it mixes in live
beside it (`versions`, `tags`, `review`, `ttl`), as do op checking (`ops`), undo
in words (`undo`), the `as_of` view (`view`) and commit labels (`context`).

    >>> import tempfile
    >>> from langgraph_chronomem.store import ChronoStore
    >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1) as store:
    ...     store.put(("alice",), "city", {"city": "Boston"})
    ...     store.head(("alice",))
    1
"""

from langgraph_chronomem.store.aio import AsyncChronoStore
from langgraph_chronomem.store.base import DATABASE_FILE, ChronoStore
from langgraph_chronomem.store.view import StoreView

__all__ = ["DATABASE_FILE", "AsyncChronoStore", "ChronoStore", "StoreView"]
