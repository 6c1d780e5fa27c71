"""The checkpointer: LangGraph checkpoints kept in step with memory.

`base` is the saver and its time travel; `sql` holds its statements, and
`postgres` what differs on PostgreSQL.

    >>> from langgraph_chronomem.checkpoint import ChronoCheckpointer, TimeTravel
    >>> ChronoCheckpointer.__name__
    'ChronoCheckpointer'
"""

from langgraph_chronomem.checkpoint.base import ChronoCheckpointer, TimeTravel

__all__ = ["ChronoCheckpointer", "TimeTravel"]
