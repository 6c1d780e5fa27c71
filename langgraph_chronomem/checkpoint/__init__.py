"""The checkpointer: LangGraph checkpoints kept in step with memory.

`base` is the saver (reading, writing and listing checkpoints, in the store's
own database); `memory` is its memory side (the position each checkpoint
records, and what time travel does to the thread's memory); `sql` holds its
statements, and `postgres` what differs on PostgreSQL.

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> from langgraph_chronomem.checkpoint import ChronoCheckpointer
    >>> with ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2) as store:
    ...     checkpointer = ChronoCheckpointer(store, on_time_travel="revert")
    ...     checkpointer.on_time_travel
    'revert'
"""

from langgraph_chronomem.checkpoint.base import ChronoCheckpointer
from langgraph_chronomem.checkpoint.memory import TimeTravel

__all__ = ["ChronoCheckpointer", "TimeTravel"]
