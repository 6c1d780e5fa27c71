"""The errors langgraph-chronomem raises.

Every error derives from `ChronomemError` and also from the builtin a caller would
reach for first, so both `except ChronomemError` and `except ValueError` work:

    >>> from langgraph_chronomem.errors import ScopeError
    >>> issubclass(ScopeError, ValueError)
    True

A failed call changes nothing: every check runs before the first write.
"""

from __future__ import annotations

__all__ = [
    "ChronomemError",
    "ConfigError",
    "InvalidFilterError",
    "InvalidRequestError",
    "InvalidValueError",
    "ReadOnlyError",
    "ScopeError",
    "VersionError",
    "VersionNotFound",
]


class ChronomemError(Exception):
    """Root of every error this package raises."""


class ScopeError(ChronomemError, ValueError):
    """A namespace does not address a scope of this store.

    Raised when a namespace is shorter than `scope_depth`, when an `as_of` view is
    asked about a namespace outside its scope, or when a scope argument is empty.
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


class InvalidValueError(ChronomemError, ValueError):
    """A value to store is not a JSON object (a mapping with string keys)."""


class InvalidFilterError(ChronomemError, ValueError):
    """A search filter uses an unknown operator or an unsafe key."""


class InvalidRequestError(ChronomemError, ValueError):
    """An undo call's arguments are malformed: an empty request, an unknown `mode`,
    a `k` that is not a positive int, or a `choice` that names no candidate."""


class ReadOnlyError(ChronomemError, TypeError):
    """A write was sent to a read-only `as_of` view."""


class ConfigError(ChronomemError, ValueError):
    """A setting is malformed or contradicts another.

    For example a store opened with another `scope_depth` than it was created
    with, a namespace template whose keys the run config does not fill, or a
    tool given no `ChronoStore` to work on.
    """
