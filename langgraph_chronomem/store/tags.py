"""Tags: names for versions of a scope, as git's tags name commits.

A tag is usable wherever `ChronoStore` takes a version (`as_of`, `show`,
`diff`, `rollback`, `revert`, `reset`) and on the command line (`--at`,
`chronomem diff before-import`). It is not a commit: making, moving or
removing one changes no memory. The methods are mixed into `ChronoStore`
through `VersionControl`, each with an async twin (`atag`, `atags`...):

    >>> import tempfile
    >>> from langgraph_chronomem import ChronoStore
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> me = ("alice",)
    >>> store.put(me, "city", {"city": "Boston"})
    >>> print(store.tag(me, "before-import"))
    before-import -> v1
    >>> store.put(me, "city", {"city": "Atlantis"})
    >>> store.as_of(me, "before-import").get(me, "city").value
    {'city': 'Boston'}
    >>> store.rollback(me, "before-import").summary
    'rolled back to v1: updated alice/city: Atlantis -> Boston'
    >>> store.close()

A name starts with a letter or `_` and holds letters, digits, `_`, `.` and
`-`; `HEAD` and `v<number>` are refused, so a name never reads as a version.
A `reset` that destroys a tagged commit leaves the tag pointing at nothing:
using it raises `VersionNotFound` (never the commit that later takes its
number), and `tags()` shows it `destroyed` until it is moved or removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph_chronomem._twins import in_thread
from langgraph_chronomem.engine.types import Tag, VersionRef
from langgraph_chronomem.store.core import StoreCore
from langgraph_chronomem.store.ops import check_scope

__all__ = ["TagControl"]


class TagControl(StoreCore):
    """Make, list, remove and read tags: a mixin for `VersionControl`."""

    def tag(
        self,
        scope: Sequence[str],
        name: str,
        version: VersionRef | None = None,
        *,
        force: bool = False,
    ) -> Tag:
        """Name a version of the scope (HEAD unless `version` is given).

        Tagging the commit a tag already names again changes nothing.

        Args:
            scope: The scope, or any namespace inside it.
            name: The tag's name: e.g. `before-import`, `release-1.2`.
            version: The version to name: a number, or another tag.
            force: Move the tag if it names another version.

        Returns:
            The tag.

        Raises:
            InvalidRequestError: For a name that is not one (see the module).
            VersionNotFound: If the scope has no such version (or no commit).
            VersionError: If the tag names another version, without `force`.
            ReadOnlyError: On a store opened with `read_only=True`.
        """
        sc = check_scope(scope, self._engine.scope_depth)
        with self._engine.transaction(write=True) as tx:
            at = tx.head(sc) if version is None else tx.version_of(sc, version)
            return tx.tag(sc, name, at, force=force)

    def tags(self, scope: Sequence[str]) -> list[Tag]:
        """The scope's tags, by version then name.

        >>> import tempfile
        >>> from langgraph_chronomem import ChronoStore
        >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
        >>> store.put(("bob",), "a", {"n": 1})
        >>> store.put(("bob",), "a", {"n": 2})
        >>> _ = store.tag(("bob",), "first", 1), store.tag(("bob",), "now")
        >>> [str(t) for t in store.tags(("bob",))]
        ['first -> v1', 'now -> v2']
        >>> store.close()
        """
        sc = check_scope(scope, self._engine.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.tags(sc)

    def untag(self, scope: Sequence[str], name: str) -> Tag:
        """Remove a tag; the version it named stays. Returns the removed tag.

        Raises:
            VersionNotFound: If the scope has no such tag (the message names
                those it has).
            InvalidRequestError: For a name that is not a tag name.
        """
        sc = check_scope(scope, self._engine.scope_depth)
        with self._engine.transaction(write=True) as tx:
            return tx.untag(sc, name)

    def version_of(self, scope: Sequence[str], version: VersionRef) -> int:
        """The version number a tag names (a number is returned as it is).

        Raises:
            VersionNotFound: For an unknown tag, or one whose commit a `reset`
                destroyed.
            VersionError: For something neither an int nor a string.
        """
        sc = check_scope(scope, self._engine.scope_depth)
        with self._engine.transaction(write=False) as tx:
            return tx.version_of(sc, version)

    atag = in_thread(tag)
    atags = in_thread(tags)
    auntag = in_thread(untag)
    aversion_of = in_thread(version_of)
