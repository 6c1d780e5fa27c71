"""Tags: names for versions of a scope, usable wherever a version number is.

A tag is a row of `tags` (scope, name, version, the commit's `seq`, when it
was made); it is not a commit, and making, moving or removing one changes no
item. The `seq` tells a tag on a commit a `reset` destroyed from one on a
number a later commit reused: such a tag is refused where a version is
expected, never read as the newer commit.

    >>> import tempfile, pathlib
    >>> from langgraph_chronomem.engine.sqlite import SqliteEngine
    >>> from langgraph_chronomem.engine.types import CommitMeta, Write
    >>> engine = SqliteEngine(pathlib.Path(tempfile.mkdtemp()) / "log.db")
    >>> with engine.transaction(write=True) as tx:
    ...     _ = tx.commit([Write(("notes",), "a", {"t": "hi"})], CommitMeta())
    ...     print(tx.tag((), "first", 1))
    first -> v1
    >>> with engine.transaction(write=False) as tx:
    ...     tx.version_of((), "first"), tx.version_of((), 1)
    (1, 1)
    >>> engine.close()

What a name may be (`check_tag_name`): it starts with a letter or `_`, holds
letters, digits, `_`, `.` and `-`, and cannot be read as a version: not
`HEAD`, not `v3`.
"""

from __future__ import annotations

import re

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import scope_text
from langgraph_chronomem.engine.types import Namespace, Tag, VersionRef
from langgraph_chronomem.engine.values import decode_time, now_text
from langgraph_chronomem.errors import (
    InvalidRequestError,
    VersionError,
    VersionNotFound,
)

__all__ = ["TagOps", "check_tag_name", "is_tag_name"]

MAX_NAME = 100
_NAME = re.compile(rf"[A-Za-z_][A-Za-z0-9_.-]{{0,{MAX_NAME - 1}}}")
_LIKE_VERSION = re.compile(r"(?i:head|v\d+)")
_NAMED = 10
"""How many of a scope's tags an unknown-tag error names."""


def is_tag_name(text: str) -> bool:
    """Whether `check_tag_name` takes `text`."""
    return bool(_NAME.fullmatch(text)) and not _LIKE_VERSION.fullmatch(text)


def check_tag_name(name: object) -> str:
    """Validate a tag's name: one that no version number can be confused with.

        >>> check_tag_name("release-1.2")
        'release-1.2'
        >>> check_tag_name("v3")
        Traceback (most recent call last):
        ...
        langgraph_chronomem.errors.InvalidRequestError: 'v3' reads as a version; \
a tag name starts with a letter or _, holds letters, digits, _ . - (up to 100), \
and is not HEAD or v<number>: e.g. before-import, release-1.2

    Raises:
        InvalidRequestError: For anything else.
    """
    if isinstance(name, str) and is_tag_name(name):
        return name
    if not isinstance(name, str):
        why = "is not a string"
    elif _LIKE_VERSION.fullmatch(name):
        why = "reads as a version"
    else:
        why = "is not a tag name"
    raise InvalidRequestError(
        f"{name!r} {why}; a tag name starts with a letter or _, holds letters, "
        f"digits, _ . - (up to {MAX_NAME}), and is not HEAD or v<number>: e.g. "
        "before-import, release-1.2"
    )


class TagOps(TransactionCore):
    """The tag operations of a transaction: make, list, remove, resolve.

    A mixin for `LogTransaction`, whose `head` and `check_version` they use.
    """

    def tags(self, scope: Namespace) -> list[Tag]:
        """The scope's tags, by version then name."""
        rows = self.cur.execute(self.sql.TAGS, (scope_text(scope),)).fetchall()
        return [_tag(scope, row) for row in rows]

    def _find_tag(self, scope: Namespace, name: str) -> Tag | None:
        row = self.cur.execute(self.sql.TAG, (scope_text(scope), name)).fetchone()
        return None if row is None else _tag(scope, row)

    def tag(
        self, scope: Namespace, name: str, version: int, *, force: bool = False
    ) -> Tag:
        """Name `version` of the scope `name`; with `force`, move a tag that
        names another version. Needs a write transaction.

        Raises:
            InvalidRequestError: For a name `check_tag_name` refuses.
            VersionNotFound: If the scope has no such version (v0 is no commit).
            VersionError: If the tag names another version, without `force`.
        """
        check_tag_name(name)
        self.check_version(scope, version, allow_zero=False)
        seq = self.commit_seq(scope, version)
        found = self._find_tag(scope, name)
        if found is not None and found.seq == seq:
            return found  # tagging the same commit again changes nothing
        if found is not None and not force:
            where = "/".join(scope) or "the store"
            raise VersionError(
                f"tag {name!r} of {where} already names v{found.version}: move it "
                "with force=True (--force), or untag it first"
            )
        self.cur.execute(
            self.sql.SAVE_TAG, (scope_text(scope), name, version, seq, now_text())
        )
        made = self._find_tag(scope, name)
        assert made is not None  # written just above, in this transaction
        return made

    def untag(self, scope: Namespace, name: str) -> Tag:
        """Remove a tag; return it. Needs a write transaction.

        Raises:
            VersionNotFound: If the scope has no tag of that name.
        """
        found = self._tag_named(scope, check_tag_name(name))
        self.cur.execute(self.sql.DELETE_TAG, (scope_text(scope), name))
        return found

    def version_of(self, scope: Namespace, version: VersionRef) -> int:
        """The version number `version` stands for: itself, or a tag's version.

        Whether the scope has that number is for `check_version` to say.

        Raises:
            VersionError: For something neither an int nor a tag's name
                (`"3"` is text: pass the int).
            VersionNotFound: For an unknown tag (its message names the scope's
                tags), or one whose commit a `reset` destroyed.
        """
        if isinstance(version, int) and not isinstance(version, bool):
            return version
        if not isinstance(version, str) or not is_tag_name(version):
            raise VersionError(f"a version is an int or a tag's name, got {version!r}")
        tag = self._tag_named(scope, version)
        if tag.destroyed:
            where = "/".join(scope) or "the store"
            raise VersionNotFound(
                f"tag {tag.name!r} named v{tag.version} of {where}, which a reset "
                "destroyed: tag another version with force=True, or untag it"
            )
        return tag.version

    def _tag_named(self, scope: Namespace, name: str) -> Tag:
        """The scope's tag `name`.

        Raises:
            VersionNotFound: If there is none; the message names those there are.
        """
        found = self._find_tag(scope, name)
        if found is not None:
            return found
        where = "/".join(scope) or "the store"
        known = [t.name for t in self.tags(scope)]
        listed = ", ".join(known[-_NAMED:])
        more = f"{len(known) - _NAMED} more and " if len(known) > _NAMED else ""
        raise VersionNotFound(
            f"{where} has no tag {name!r}; "
            + (f"its tags are {more}{listed}" if known else "it has no tags")
        )


def _tag(scope: Namespace, row: tuple[str, int, int, str, int | None]) -> Tag:
    """A `TAGS` row: name, version, seq, created_at, and the seq of the commit
    now at that version (`None`: no commit)."""
    name, version, seq, created, now_seq = row
    return Tag(scope, name, version, seq, decode_time(created), now_seq != seq)
