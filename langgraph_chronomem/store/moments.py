"""What "as of" names, for the history tool and the command line: a version
(`3`, `v3`), a tag's name, or a moment (an ISO date or time: the scope's
version then, its newest commit made at or before it).

    >>> import tempfile
    >>> from datetime import datetime, timezone as tz
    >>> from langgraph_chronomem import ChronoStore, commit_context
    >>> store = ChronoStore.from_path(tempfile.mkdtemp(), scope_depth=1)
    >>> for month in (1, 3):
    ...     with commit_context(timestamp=datetime(2024, month, 5, tzinfo=tz.utc)):
    ...         store.put(("alice",), "job", {"text": f"job of month {month}"})
    >>> refs = ("v2", "2024-02-01", "2023-12-31")
    >>> [version_named(store, ("alice",), ref) for ref in refs]
    [2, 1, 0]
    >>> store.close()
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from langgraph_chronomem.engine.types import Branch
from langgraph_chronomem.store.base import ChronoStore
from langgraph_chronomem.store.ops import check_scope

__all__ = ["branch_named", "moment_of", "version_at", "version_named"]

_NUMBER = re.compile(r"[vV]?(\d+)")


def moment_of(text: str) -> datetime | None:
    """`text` as a moment, if it is an ISO date or time (naive means UTC).

    >>> moment_of("2024-03-01"), moment_of("v3")
    (datetime.datetime(2024, 3, 1, 0, 0), None)
    """
    if _NUMBER.fullmatch(text.strip()):
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def branch_named(store: ChronoStore, scope: Sequence[str], name: str) -> Branch:
    """Branch `name` of the scope: where it forks and its head.

    Raises:
        BranchNotFound: If the scope has no branch of that name.
    """
    sc = check_scope(scope, store.scope_depth)
    with store._engine.transaction(write=False) as tx:
        return tx.branch(sc, name)


def version_at(
    store: ChronoStore,
    scope: Sequence[str],
    when: datetime,
    *,
    branch: str | None = None,
) -> int:
    """The scope's version at `when`: its newest commit made at or before it
    (0 before its first). On `branch`, the branch's: its newest own commit
    by then, else the scope's version then, at most the fork."""
    if branch is not None:
        own = store.log(scope, until=when, limit=1, branch=branch)
        if own:
            return own[0].version
        fork = branch_named(store, scope, branch).fork
        return min(version_at(store, scope, when), fork)
    commits = store.log(scope, until=when, limit=1)
    return commits[0].version if commits else 0


def version_named(
    store: ChronoStore,
    scope: Sequence[str],
    ref: int | str,
    *,
    branch: str | None = None,
) -> int:
    """The version `ref` names in `scope` (a moment: on `branch`, the
    branch's version then): a number, `v3`, a tag's name, or an ISO date or
    time.

    Raises:
        VersionNotFound: For an unknown tag.
        VersionError: For something that is none of these.
    """
    if isinstance(ref, int):
        return ref
    number = _NUMBER.fullmatch(ref.strip())
    if number:
        return int(number.group(1))
    moment = moment_of(ref)
    if moment is not None:
        return version_at(store, scope, moment, branch=branch)
    return store.version_of(scope, ref.strip())
