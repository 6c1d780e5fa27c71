"""The errors langgraph-chronomem raises.

Every error derives from `ChronomemError` and also from the builtin a caller would
reach for first, so both `except ChronomemError` and `except ValueError` work:

    >>> from langgraph_chronomem.errors import ScopeError
    >>> issubclass(ScopeError, ValueError)
    True

A failed call changes nothing: every check runs before the first write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.store.base import InvalidNamespaceError

if TYPE_CHECKING:
    from langgraph_chronomem.engine.types import MergeConflict

__all__ = [
    "BranchError",
    "BranchNotFound",
    "ChronomemError",
    "CompactedError",
    "ConfigError",
    "DestinationNotEmptyError",
    "InvalidFilterError",
    "InvalidRequestError",
    "InvalidValueError",
    "MergeConflictError",
    "ModelUnavailableError",
    "NamespaceError",
    "ReadOnlyError",
    "ScopeError",
    "StorageError",
    "VersionError",
    "VersionNotFound",
    "WriteConflictError",
]


class ChronomemError(Exception):
    """Root of every error this package raises."""


class ScopeError(ChronomemError, ValueError):
    """A namespace does not address a scope of this store.

    Raised when a namespace is shorter than `scope_depth`, when an `as_of` view is
    asked about a namespace outside its scope, or when a scope argument is empty.
    """


class NamespaceError(ScopeError, InvalidNamespaceError):
    """A namespace written as one string (`"memories/alice"` for
    `("memories", "alice")`), or with a label that is not valid Unicode.

    It is also LangGraph's `InvalidNamespaceError`, which LangGraph's stores
    raise for the labels they refuse, and a `ScopeError`, as every bad scope
    argument is.
    """


class VersionNotFound(ChronomemError, KeyError):
    """A version number that the scope never had (or no longer has after a reset)."""

    def __str__(self) -> str:
        # KeyError quotes its message; show it as written.
        return str(self.args[0]) if self.args else ""


class VersionError(ChronomemError, ValueError):
    """A version that exists but cannot be used for the request.

    For example a rollback to the version that is already HEAD, or a revert of a
    commit that changed nothing.
    """


class CompactedError(VersionError):
    """A version whose values a retention policy compacted away: it cannot be
    read whole (`as_of`) or brought back (`rollback`, `revert`). The message
    names the oldest version that can."""


class InvalidValueError(ChronomemError, ValueError):
    """A value or key the log cannot hold.

    A value that is not a JSON object (a mapping with string keys), holds a
    non-finite float or nests deeper than JSON encoding allows; a key that is
    not a string.
    """


class InvalidFilterError(ChronomemError, ValueError):
    """A search filter uses an unknown operator or an unsafe key, or has a
    top-level `$or` or `$and` (LangGraph's filters AND their fields and have
    neither: run one search per alternative). A comparison with NaN is no
    error: it matches nothing, as in LangGraph's stores.
    """


class InvalidRequestError(ChronomemError, ValueError):
    """A call's arguments are malformed.

    An undo request that is empty, an unknown `mode`, a `k` that is not a
    positive int, a `choice` that names no candidate; a `limit` or `offset`
    that is not an int >= 0; a `since` or `until` that is not a `datetime`.
    """


class ReadOnlyError(ChronomemError, TypeError):
    """A write was sent to a read-only `as_of` view, or to a store opened with
    `read_only=True`."""


class ConfigError(ChronomemError, ValueError):
    """A setting is malformed or contradicts another.

    For example a store opened with another `scope_depth` than it was created
    with, a database upgraded by a newer langgraph-chronomem, a namespace
    template whose keys the run config does not fill, or a tool given no
    `ChronoStore` to work on.
    """


class StorageError(ChronomemError, OSError):
    """The store's database cannot be used as asked; nothing was written.

    The path is a file where a store directory belongs, the file is not a
    SQLite database or is damaged, the media is read-only, the disk is full,
    or the store was closed. The message says which and what to do.
    """


class DestinationNotEmptyError(ChronomemError, ValueError):
    """The destination of a copy (`chronomem migrate`) already holds other data;
    nothing was written.

    Copy into a new directory or an empty database; a copy of this same source
    that was interrupted is not refused, it resumes.
    """


class WriteConflictError(ChronomemError, ValueError):
    """A conditional write (`put_if`), or the approval of a proposal, found the
    item changed since the caller read it: another writer got there first.
    Nothing was written; read it again and decide (or approve with `force`)."""


class BranchError(ChronomemError, ValueError):
    """A branch cannot be made or used as asked; nothing changed.

    A name that is not one word of letters, digits, `-` and `_` (at most 64),
    a name the scope already has, or a branch whose fork a `reset` of its
    scope has since destroyed (delete it).
    """


class BranchNotFound(BranchError, KeyError):
    """The scope has no branch of that name (`branches(scope)` lists them)."""

    def __str__(self) -> str:
        # KeyError quotes its message; show it as written.
        return str(self.args[0]) if self.args else ""


class MergeConflictError(ChronomemError, ValueError):
    """A merge found items (or fields of records) that both the branch and
    HEAD changed to different values, and neither `resolve` nor `force`
    said which to keep. Nothing was written.

    Attributes:
        conflicts: The conflicts (`MergeConflict`): item, field, and the
            base, ours (the branch's) and theirs (HEAD's) values.
    """

    def __init__(self, message: str, conflicts: tuple[MergeConflict, ...] = ()) -> None:
        super().__init__(message)
        self.conflicts = conflicts


class ModelUnavailableError(ChronomemError, RuntimeError):
    """A model could not be found, fetched or loaded; the message names the fix."""
