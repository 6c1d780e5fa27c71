"""langgraph-chronomem: git for agent memory, behind LangGraph's own interfaces.

>>> from langgraph_chronomem import ChronoStore
>>> import tempfile
>>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=2)
>>> store.put(("memories", "alice"), "city", {"city": "Boston"})
>>> store.head(("memories", "alice"))
1
>>> store.close()
"""

from langgraph_chronomem.checkpoint import ChronoCheckpointer
from langgraph_chronomem.deployment import open_chronomem, shared_chronomem
from langgraph_chronomem.engine.types import (
    Branch,
    Change,
    Commit,
    Compaction,
    Conflict,
    ItemVersion,
    MatchedRevert,
    MergeConflict,
    Redaction,
    RevertConflict,
    Tag,
)
from langgraph_chronomem.errors import (
    BranchError,
    BranchNotFound,
    ChronomemError,
    CompactedError,
    ConfigError,
    DestinationNotEmptyError,
    InvalidFilterError,
    InvalidRequestError,
    InvalidValueError,
    MergeConflictError,
    ModelUnavailableError,
    NamespaceError,
    ReadOnlyError,
    ScopeError,
    StorageError,
    VersionError,
    VersionNotFound,
    WriteConflictError,
)
from langgraph_chronomem.namespace import NamespaceTemplate
from langgraph_chronomem.search.resolve import Candidate, Resolution, ResolverConfig
from langgraph_chronomem.store import (
    AsyncChronoStore,
    BranchView,
    ChronoStore,
    StoreView,
)
from langgraph_chronomem.store.context import commit_context
from langgraph_chronomem.store.undo import UndoResult
from langgraph_chronomem.tools import (
    create_memory_history_tool,
    create_revert_source_tool,
    create_review_node,
    create_undo_memory_tool,
    create_undo_node,
)

__all__ = [
    "AsyncChronoStore",
    "Branch",
    "BranchError",
    "BranchNotFound",
    "BranchView",
    "Candidate",
    "Change",
    "ChronoCheckpointer",
    "ChronoStore",
    "ChronomemError",
    "Commit",
    "CompactedError",
    "Compaction",
    "ConfigError",
    "Conflict",
    "DestinationNotEmptyError",
    "InvalidFilterError",
    "InvalidRequestError",
    "InvalidValueError",
    "ItemVersion",
    "MatchedRevert",
    "MergeConflict",
    "MergeConflictError",
    "ModelUnavailableError",
    "NamespaceError",
    "NamespaceTemplate",
    "ReadOnlyError",
    "Redaction",
    "Resolution",
    "ResolverConfig",
    "RevertConflict",
    "ScopeError",
    "StorageError",
    "StoreView",
    "Tag",
    "UndoResult",
    "VersionError",
    "VersionNotFound",
    "WriteConflictError",
    "commit_context",
    "create_memory_history_tool",
    "create_revert_source_tool",
    "create_review_node",
    "create_undo_memory_tool",
    "create_undo_node",
    "open_chronomem",
    "shared_chronomem",
]
