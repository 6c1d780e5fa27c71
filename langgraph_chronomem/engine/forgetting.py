"""Forgetting for real: values erased from every version of the log.

`redact` erases matching content, `compact` the versions a retention policy
does not keep. Commits stay as an audit skeleton, each erased row records why
it was erased, the change index is made again for the rows that read the
erased values, and the vector projections are told which vectors to delete
and which to embed again (`ERASURES`). `compact` records the versions it left
incomplete, so a read at an old version knows cheaply whether it is whole
(`check_whole`). `reset` deletes every version after one, commits and all.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from langgraph_chronomem.engine.change_index import FULL_TEXT
from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import (
    RebuildRequest,
    _index_rows,
    _NewRow,
    chunks,
    namespace_from_text,
    namespace_text,
    rebuild_requests,
    rebuild_text,
    scope_text,
)
from langgraph_chronomem.engine.sql import BranchAt
from langgraph_chronomem.engine.types import (
    CommitMeta,
    Compaction,
    Erased,
    Namespace,
    Redaction,
)
from langgraph_chronomem.engine.values import decode_value
from langgraph_chronomem.errors import CompactedError

__all__ = ["ERASURES", "REDACTED_REASON", "ForgettingOps"]

REDACTED_REASON = "[redacted]"  # what a commit reason `redact` erased reads
ERASURES = "vector erasures"
"""The setting that lists what the vector collections must still do after a
`redact` or `compact`, one entry each: `scope`, the log rows whose values were
erased (`erased`: their vectors go), the rows whose change text changed
with them (`changed`: embedded again), and per collection the `ticket` of
the scope rebuild asked for alongside, which a crash before the entry is
applied leaves to do instead (`search/erase.py` applies and strikes both)."""
_COMPACTED = "compacted "  # + a scope: the setting of its `_compacted_spans`


class _Matched(NamedTuple):
    """What `redact` erases of one timeline: its rows (id, namespace, key,
    version, valid_to) with their values, the commits whose reason (seq,
    version) or labels (new labels, seq) held the text, and the texts."""

    scope: Namespace
    values: dict[tuple[int, str, str, int, int | None], Any]
    reasons: list[tuple[int, int]]
    labelled: list[tuple[str, int]]
    texts: list[str]


class ForgettingOps(TransactionCore):
    """The operations that erase values from the log: redact, compact, reset,
    and what reads need to know of the versions compaction left incomplete.

    A mixin for `LogTransaction`, whose reads, `_write` and change index
    these methods use.
    """

    erased_texts: tuple[str, ...] = ()
    """The texts the last `redact` erased, as the log wrote them (JSON
    strings' insides): what `scrub` checks the file against. Kept in memory
    only; the caller reads it once the transaction has committed."""

    def redact(
        self,
        scope: Namespace,
        meta: CommitMeta,
        *,
        items: Sequence[tuple[Namespace, str]] | None = None,
        key: str | None = None,
        contains: str | None = None,
        source: str | None = None,
        dry_run: bool = False,
    ) -> Redaction:
        """Erase every version of the matching content from the scope's history.

        A version matches when every criterion given holds: its item is one of
        `items`, its key matches the glob `key`, its value holds the text
        `contains` (in any of its strings, ignoring case and Unicode form),
        and a commit labelled `source` wrote it. Each matching version's value
        becomes NULL for good and is recorded as redacted; an item whose HEAD
        matches is deleted by the `redact` commit, which also records who,
        when and why. Commits stay as an audit skeleton; with `contains`, the
        reasons of the commits that wrote a matching version read
        `[redacted]` if they hold the text, and so do their labels' values
        (`commit_context(labels=...)`). What the scope's branches wrote
        that matches is erased too (a branch then reads the item as absent),
        but only the scope's own versions are listed. The change index is
        made again for the rows that read the erased values, and the vector
        projections are asked to rebuild the scope (and those branches).
        """
        self.hold_change_index()  # then the scope's lock, before anything is read
        self.head(scope)
        wanted = None if items is None else {(namespace_text(n), k) for n, k in items}
        needle = None if contains is None else _folded(contains)
        base = self._matching(scope, None, wanted, key, needle, source)
        # What the scope's branches wrote themselves (they copy nothing of it).
        timelines = [base] + [
            self._matching(scope, at, wanted, key, needle, source)
            for at in self.branch_mounts(scope)
        ]
        matched = sorted(base.values, key=lambda row: row[1:4])  # ns, key, version
        found = Redaction(
            scope,
            tuple((namespace_from_text(ns), k, v) for _, ns, k, v, _ in matched),
            tuple(
                (namespace_from_text(ns), k)
                for _, ns, k, _, end in matched
                if end is None
            ),
            reasons=tuple(sorted(version for _, version in base.reasons)),
        )
        if dry_run or not any(t.values for t in timelines):
            return found
        ids = [row[0] for t in timelines for row in t.values]
        stale = set(ids)
        for t in timelines:
            for _, version in t.reasons:
                stale.update(self.row_ids_of(t.scope, version))
        head_rows = [
            _NewRow(ns, k, None, None) for _, ns, k, _, end in matched if end is None
        ]
        with self._zeroing_freed():
            commit = self._write(scope, "redact", head_rows, meta)
            assert commit is not None
            before = self._texts_near(ids, stale)
            self._erase(ids, "redacted", commit.seq)
            self.cur.executemany(
                self.sql.SET_REASON,
                [(REDACTED_REASON, seq) for t in timelines for seq, _ in t.reasons],
            )
            self.cur.executemany(
                self.sql.SET_LABELS, [row for t in timelines for row in t.labelled]
            )
            self.index_again(stale)
            self._ask_erasure(scope, ids, before)
            for t in timelines[1:]:
                if t.values:
                    self._rebuild_projections(t.scope)
        texts = [text for t in timelines for text in t.texts]
        self.erased_texts = _as_written(texts, contains)
        return replace(found, commit=self.log(scope, version=commit.version)[0])

    def _matching(
        self,
        scope: Namespace,
        branch: BranchAt | None,
        wanted: set[tuple[str, str]] | None,
        key: str | None,
        needle: str | None,
        source: str | None,
    ) -> _Matched:
        """What `redact` erases of one timeline: the scope's own, or what one
        of its branches wrote (its namespaces compared without its mount)."""
        timeline = scope if branch is None else namespace_from_text(branch.scope_text)
        sc = scope_text(timeline)
        written = None
        if source is not None:
            written = {
                row_id
                for commit in self.log(timeline, labels={"source": source})
                for row_id in self.row_ids_of(timeline, commit.version)
            }
        statement, params = self.sql.VALUES_IN_SCOPE, [sc]
        if needle is not None and self.sql.VALUES_MAYBE_HOLDING and _raw_finds(needle):
            statement, params = self.sql.VALUES_MAYBE_HOLDING, [sc, needle]
        values = {}
        for row_id, ns, k, version, value, valid_to in self.cur.execute(
            statement, params
        ).fetchall():
            if branch is not None:
                ns = branch.unmounted(ns)
            if (
                (wanted is None or (ns, k) in wanted)
                and (key is None or fnmatch.fnmatchcase(k, key))
                and (written is None or row_id in written)
            ):
                decoded = decode_value(value)
                if needle is None or needle in _strings(decoded):
                    values[(row_id, ns, k, version, valid_to)] = decoded
        reasons, labelled = [], []
        texts = list(_walk(list(values.values())))
        if needle is not None and values:
            versions = sorted({version for _, _, _, version, _ in values})
            texts_of = [
                row
                for chunk in chunks(versions)
                for row in self.cur.execute(*self.sql.commit_texts(sc, chunk))
            ]
            for seq, version, reason, labels in sorted(texts_of):
                if reason is not None and needle in _folded(reason):
                    reasons.append((seq, version))
                    texts.append(reason)
                redacted = _redacted_labels(labels, needle)
                if redacted is not None:
                    labelled.append((redacted, seq))
                    texts += _walk(json.loads(labels))
        return _Matched(timeline, values, reasons, labelled, texts)

    def compact(
        self,
        scope: Namespace,
        *,
        keep_last: int | None = None,
        keep_after: datetime | None = None,
        dry_run: bool = False,
    ) -> Compaction:
        """Erase the versions a retention policy does not keep.

        Per item, the versions kept are its first, its HEAD, its last
        `keep_last` and those committed after `keep_after`; every other
        version with a value has it erased, recorded as compacted. Commits
        stay (`log` shows the erased values as compacted); `as_of`,
        `rollback` and `revert` refuse what needs an erased value with a
        `CompactedError` that names the oldest version they can use. No
        commit is made: the memory at HEAD does not change.
        """
        self.hold_change_index()  # then the scope's lock, before anything is read
        self.head(scope)
        sc = scope_text(scope)
        after = None if keep_after is None else self.sql.encode_time(keep_after)
        # Only rows with a value: none erased already, no deletion.
        rows = self.cur.execute(self.sql.VERSIONS_IN_SCOPE, (sc,)).fetchall()
        doomed = []
        for _, group in itertools.groupby(rows, key=lambda row: (row[1], row[2])):
            versions = list(group)
            tail = len(versions) - (keep_last or 0)
            doomed += [
                row
                for i, row in enumerate(versions)
                if 0 < i < tail  # not the first, not among the last
                and row[4] is not None  # not HEAD
                and (after is None or row[5] <= after)
            ]
        found = Compaction(
            tuple((namespace_from_text(ns), k, v) for _, ns, k, v, _, _ in doomed),
            dry_run=dry_run,
        )
        if not dry_run and doomed:
            ids = [row[0] for row in doomed]
            with self._zeroing_freed():
                before = self._texts_near(ids, ids)
                self._erase(ids, "compacted", None)
                self.index_again(ids)
                self._record_compacted_spans(scope)
                self._ask_erasure(scope, ids, before)
        return replace(found, whole_from={scope: self.whole_from(scope)})

    def reset(self, scope: Namespace, to: int) -> int:
        """Delete every version after `to` for good. Returns how many were removed.

        Raises:
            CompactedError: If values the scope held at `to` were compacted.
        """
        self.hold_change_index()  # before the scope's lock
        head = self.check_version(scope, to, allow_zero=True)
        self.check_whole(scope, to)
        sc = scope_text(scope)
        if self.sql.KEEP_ID_FLOORS is not None:
            self.cur.execute(self.sql.KEEP_ID_FLOORS)
        reopen = [r[0] for r in self.cur.execute(self.sql.PREV_IDS_AFTER, (sc, to))]
        self.cur.execute(self.sql.DELETE_CHANGES_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_ERASED_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_ITEMS_AFTER, (sc, to))
        self.cur.execute(self.sql.DELETE_COMMITS_AFTER, (sc, to))
        for chunk in chunks(reopen):
            self.cur.execute(*self.sql.reopen(chunk, to))
        if self._compacted_spans(scope):
            self._record_compacted_spans(scope)  # some compacted rows went
        self._rebuild_projections(scope)
        return head - to

    def whole_from(self, scope: Namespace) -> int:
        """The oldest version of the scope that no compacted value is missing
        from: `as_of` and `rollback` read it, and every later one, whole."""
        spans = self._compacted_spans(scope)
        return spans[-1][1] if spans else 0

    def check_whole(self, scope: Namespace, version: int) -> None:
        """Raise `CompactedError` if a value the scope held at `version` was
        compacted away. One read of a setting: `as_of` views call it on every
        read."""
        for low, high in self._compacted_spans(scope):
            if low <= version < high:
                raise CompactedError(
                    f"v{version} of {'/'.join(scope)} was compacted: values the "
                    "scope held then are gone (a retention policy keeps each "
                    "item's first version, HEAD and the newest ones); versions "
                    f"from v{self.whole_from(scope)} on are whole"
                )

    def _compacted_spans(self, scope: Namespace) -> list[tuple[int, int]]:
        """The versions `[low, high)` at which some compacted value was visible,
        as `compact` and `reset` record them (merged, oldest first)."""
        spans = self.meta(_COMPACTED + scope_text(scope))
        return [] if spans is None else [(low, high) for low, high in json.loads(spans)]

    def _record_compacted_spans(self, scope: Namespace) -> None:
        """Work out `_compacted_spans` again from the log, after it changed."""
        merged: list[list[int]] = []
        for low, high in self.cur.execute(
            self.sql.COMPACTED_SPANS, (scope_text(scope),)
        ).fetchall():
            if merged and low <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], high)
            else:
                merged.append([low, high])
        self.set_meta(_COMPACTED + scope_text(scope), json.dumps(merged))

    @contextmanager
    def _zeroing_freed(self) -> Iterator[None]:
        """On SQLite, have the statements inside zero in place what they free
        (`secure_delete`): an erased value's cell and overflow pages, the
        change index rows made again, a commit's reason. Then `scrub` need
        not rewrite the whole file (`engine/scrub.py`). PostgreSQL has no
        such setting: its `scrub` rewrites the tables."""
        if not isinstance(self.cur, sqlite3.Cursor):
            yield
            return
        (before,) = self.cur.execute("PRAGMA secure_delete").fetchone()
        self.cur.execute("PRAGMA secure_delete = ON")
        try:
            yield
        finally:
            self.cur.execute(f"PRAGMA secure_delete = {int(before)}")

    def _texts_near(
        self, erased: Sequence[int], stale: Iterable[int]
    ) -> dict[int, tuple[str, str]]:
        """The embedded words (`new`, `context`) of the rows whose change text
        an erasure can change, as they are before it: the `stale` rows (whose
        commits' reasons go too) and the rows that replaced them, but for the
        `erased` rows themselves, whose vectors go."""
        ids = set(stale)
        ids.update(row[0] for row in self.row_links(list(ids), following=True))
        return self._words(sorted(ids.difference(erased)))

    def _words(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """What the change vectors of these rows embed (`new`, `context`)."""
        return {
            row.row_id: (row.text.new, row.text.context)
            for row in self.change_rows_of(ids)
        }

    def _ask_erasure(
        self,
        scope: Namespace,
        erased: Sequence[int],
        before: Mapping[int, tuple[str, str]],
    ) -> None:
        """Ask the vector collections to delete the vectors of the `erased`
        rows and embed again the rows whose words changed since `before`
        (`ERASURES`), with a rebuild of the scope asked alongside: what a
        crash before the entry is applied leaves to do. Nothing for a store
        that never made a collection."""
        changed = [
            row_id
            for row_id, words in self._words(sorted(before)).items()
            if before[row_id] != words
        ]
        asked = self._rebuild_tickets()
        self._rebuild_projections(scope)
        tickets = {
            name: ticket
            for name, held in self._rebuild_tickets().items()
            for ticket in held - asked.get(name, set())
        }
        if not tickets:
            return
        pending = json.loads(self.meta(ERASURES) or "[]")
        pending.append(
            {
                "scope": list(scope),
                "tickets": tickets,
                "erased": sorted(erased),
                "changed": changed,
            }
        )
        self.set_meta(ERASURES, json.dumps(pending))

    def _rebuild_tickets(self) -> dict[str, set[str]]:
        """Each projection's rebuild requests' tickets, the rows held."""
        return {
            name: {request.ticket for request in rebuild_requests(rebuild)}
            for name, _, rebuild in self.cur.execute(
                self.sql.ALL_PROJECTIONS_FOR_UPDATE
            ).fetchall()
        }

    def _rebuild_projections(self, scope: Namespace) -> None:
        """Ask every vector projection to make the scope again from the log, for
        a change to the past (a reset, a redaction) that catching up would miss.
        The full-text index is kept right by the change itself."""
        projections = self.cur.execute(self.sql.ALL_PROJECTIONS_FOR_UPDATE).fetchall()
        for name, _, rebuild in projections:
            if name == FULL_TEXT:
                continue
            # Added even if the scope is there: a rebuild in progress may have
            # read the scope before this change, and strikes only what it saw.
            requests = [*rebuild_requests(rebuild), RebuildRequest.new(scope)]
            self.cur.execute(self.sql.SET_REBUILD, (rebuild_text(requests), name))

    def _erase(self, ids: Sequence[int], why: Erased, seq: int | None) -> None:
        """Erase these log rows' values for good, recording why."""
        self.cur.executemany(self.sql.ERASE_VALUE, [(i,) for i in ids])
        self.cur.executemany(self.sql.RECORD_ERASURE, [(i, seq, why) for i in ids])

    def index_again(self, ids: Iterable[int]) -> None:
        """Make the change index's entries of these log rows, and of the rows
        that replaced them, again from the log: their values, or their
        commits' reasons, were erased. Rows the index has not read yet are
        left to it: it reads them as they are now."""
        ids = list(ids)
        ids += [row[0] for row in self.row_links(ids, following=True)]
        for chunk in chunks(sorted(set(ids))):
            held = [row[0] for row in self.cur.execute(*self.sql.indexed(chunk))]
            if not held:
                continue
            self.cur.execute(*self.sql.delete_changes(held))
            rows = self.change_rows_of(held)
            for statement, params in self.sql.index_changes(_index_rows(rows)):
                self.cur.executemany(statement, params)


# Label names the library reads (the run's labels, `source`, review's `held`):
# its own words, never a person's text, so a redaction keeps them as they are.
_LIBRARY_LABELS = frozenset(
    {"node", "thread_id", "checkpoint_id", "run_id", "task_id", "source", "held"}
)


def _redacted_labels(labels: str, needle: str) -> str | None:
    """A commit's labels (JSON, as stored) with each value that holds `needle`
    reading `[redacted]`, and each name that holds it renamed `[redacted]`
    (`[redacted 2]`... so that no label is lost), but for the names the library
    reads; `None` if nothing holds it.

    >>> _redacted_labels('{"session": "s-1", "topic": "Trip to Paris"}', "paris")
    '{"session":"s-1","topic":"[redacted]"}'
    >>> _redacted_labels('{"thread_id": "t-1", "paris_a": 1, "paris_b": 2}', "paris")
    '{"[redacted 2]":2,"[redacted]":1,"thread_id":"t-1"}'
    >>> _redacted_labels('{"session": "s-1"}', "paris") is None
    True
    """

    def holds(text: Any) -> bool:
        return needle in _folded(str(text))

    stored = json.loads(labels)
    redacted: dict[str, Any] = {}
    renamed = 0
    for name, value in stored.items():
        if holds(name) and name not in _LIBRARY_LABELS:
            renamed += 1
            name = REDACTED_REASON if renamed == 1 else f"[redacted {renamed}]"
        redacted[name] = REDACTED_REASON if holds(value) else value
    if redacted == stored:
        return None
    return orjson.dumps(redacted, option=orjson.OPT_SORT_KEYS).decode()


# What `str` of a JSON number may hold, where JSON may write it otherwise
# (`1e+16`, JSON's `1e16`).
_NUMBER_CHARS = frozenset("0123456789.e+-")


def _raw_finds(needle: str) -> bool:
    """Whether a value's JSON text, lowered in ASCII, holds `needle` (folded)
    wherever its `_strings` do, for a value of plain ASCII without escapes
    (JSON as `encode_value` writes it; `_folded` of ASCII is lowering it):
    when `needle` holds no character JSON escapes (a quote, a backslash, a
    control character, the newline `_strings` joins with), so it lies
    inside one string or key written as it reads, or inside `true` or
    `false`; and a character no number's `str` holds, so it does not lie
    in a number. `VALUES_MAYBE_HOLDING` reads the other values whole.

    >>> _raw_finds("zorbanite syndrome"), _raw_finds("né à Paris")
    (True, True)
    >>> _raw_finds('said "hi"'), _raw_finds("1e+16"), _raw_finds("")
    (False, False, False)
    """
    return not set(needle) <= _NUMBER_CHARS and not any(
        c in '"\\' or c < " " for c in needle
    )


def _strings(value: Any) -> str:
    """Every string and number in a value (keys too), one per line, folded
    as `_folded` does."""
    return _folded("\n".join(_walk(value)))


def _walk(node: Any) -> Iterator[str]:
    """Every string and number in a value (keys too), as `str`."""
    if isinstance(node, Mapping):
        for name, inner in node.items():
            yield str(name)
            yield from _walk(inner)
    elif isinstance(node, list):
        for inner in node:
            yield from _walk(inner)
    elif node is not None:
        yield str(node)


def _as_written(texts: Iterable[str], contains: str | None) -> tuple[str, ...]:
    """What of `texts` a redaction erased, as JSON writes a string (the log's
    values and labels): with `contains`, each place it holds that text in
    any case (or the whole text, where only Unicode folding finds it) and
    the text itself; otherwise each whole text.

    >>> _as_written(['Trip to "Paris"', "paris!"], "PARIS")
    ('PARIS', 'Paris', 'paris')
    >>> _as_written(["lives in Lyon", "9"], None)
    ('9', 'lives in Lyon')
    """
    found = set()
    for text in texts:
        if contains is None:
            found.add(text)
            continue
        places = re.findall(re.escape(contains), text, re.IGNORECASE)
        if places:
            found.update(places)
        elif _folded(contains) in _folded(text):
            found.add(text)
    if contains is not None:
        found.add(contains)
    return tuple(sorted(orjson.dumps(text).decode()[1:-1] for text in found))


def _folded(text: str) -> str:
    """`text` for caseless matching that ignores Unicode's composed or
    decomposed forms ("Müller" either way)."""
    return unicodedata.normalize("NFKC", text).casefold()
