"""The edges of ChronoStore: each misuse gets a typed error that names the fix.

Every error here is a `ChronomemError` that also derives from the builtin a
caller would reach for, and every test that attempts a write checks that it
changed nothing. All run on real SQLite files; the read-only media and full-disk
cases mount a real read-only bind mount or a real tiny tmpfs in a child process
with its own mount table (`unshare`), and are skipped where that is not allowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import math
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.sqlite import SqliteStore

from langgraph_chronomem import (
    ChronoCheckpointer,
    ChronomemError,
    ChronoStore,
    ConfigError,
    InvalidFilterError,
    InvalidRequestError,
    InvalidValueError,
    ReadOnlyError,
    StorageError,
    VersionNotFound,
)
from langgraph_chronomem.engine.values import MAX_DEPTH
from langgraph_chronomem.store import DATABASE_FILE

ALICE = ("memories", "alice")


def nested(depth: int, *, in_lists: bool = False) -> dict[str, Any]:
    """A value whose innermost container sits `depth` levels below the top."""
    inner: Any = {}
    for _ in range(depth):
        inner = [inner] if in_lists else {"x": inner}
    return {"deep": inner}


def toy_embed(texts: list[str]) -> list[list[float]]:
    """A deterministic embedding: letter counts, so no model is loaded."""
    vectors = []
    for text in texts:
        vector = [float(text.lower().count(ch)) for ch in "aeiourstln"]
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        vectors.append([x / norm for x in vector])
    return vectors


def fingerprint(directory: Path) -> dict[str, str]:
    """Each file under `directory` by its content hash: what "changed nothing" means.

    SQLite's shared-memory index (`-shm`) and an empty `-wal` hold no data and
    come and go with connections, so they do not count.
    """
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.stat().st_size and not path.name.endswith("-shm")
    }


def is_typed(error: BaseException, builtin: type[BaseException]) -> bool:
    return isinstance(error, ChronomemError) and isinstance(error, builtin)


# -- values nested too deep -------------------------------------------------------


@pytest.mark.parametrize("in_lists", [False, True], ids=["objects", "lists"])
def test_a_value_nested_5000_deep_is_refused(
    store: ChronoStore, in_lists: bool
) -> None:
    store.put(ALICE, "kept", {"v": 1})
    with pytest.raises(
        InvalidValueError, match="nests deeper than the 254 levels"
    ) as info:
        store.batch(
            [
                PutOp(ALICE, "other", {"v": 2}),
                PutOp(ALICE, "bad", nested(5000, in_lists=in_lists)),
            ]
        )
    assert is_typed(info.value, ValueError)
    assert store.head(ALICE) == 1
    assert [item.key for item in store.search(ALICE)] == ["kept"]


def test_a_value_as_deep_as_json_allows_is_stored(store: ChronoStore) -> None:
    value = nested(MAX_DEPTH - 2)  # and the top object and innermost {}: MAX_DEPTH
    store.put(ALICE, "deep", value)
    assert store.get(ALICE, "deep").value == value  # type: ignore[union-attr]


@pytest.mark.parametrize("fields", [["$"], ["deep"]])
def test_an_indexed_store_refuses_a_deep_value_before_embedding_it(
    tmp_path: Path, fields: list[str]
) -> None:
    index = {"dims": 10, "embed": toy_embed, "fields": fields}
    with ChronoStore.from_path(tmp_path, scope_depth=2, index=index) as store:  # type: ignore[arg-type]
        with pytest.raises(InvalidValueError, match="nests deeper"):
            store.put(ALICE, "bad", nested(5000))
        assert store.head(ALICE) == 0


# -- counts and times ------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.search(ALICE, limit=-1),
        lambda s: s.search(ALICE, limit="3"),
        lambda s: s.search(ALICE, offset=-1),
        lambda s: s.search(ALICE, limit=True),
        lambda s: s.list_namespaces(limit=-1),
        lambda s: s.list_namespaces(offset="2"),
        lambda s: s.log(ALICE, limit=-1),
        lambda s: s.log(ALICE, limit=2.0),
        lambda s: s.log(ALICE, limit=False),
    ],
    ids=[
        "search-negative",
        "search-str",
        "search-offset",
        "search-bool",
        "namespaces-negative",
        "namespaces-offset-str",
        "log-negative",
        "log-float",
        "log-bool",
    ],
)
def test_a_bad_limit_or_offset_is_a_typed_error(store: ChronoStore, call: Any) -> None:
    store.put(ALICE, "a", {"v": 1})
    with pytest.raises(InvalidRequestError, match="must be an int >= 0") as info:
        call(store)
    assert is_typed(info.value, ValueError)


def test_a_batch_with_a_bad_limit_writes_nothing(store: ChronoStore) -> None:
    with pytest.raises(InvalidRequestError):
        store.batch([PutOp(ALICE, "a", {"v": 1}), SearchOp(ALICE, limit=-5)])
    assert store.head(ALICE) == 0


@pytest.mark.parametrize("bound", ["since", "until"])
@pytest.mark.parametrize("moment", ["yesterday", "2025-03-01", 1_700_000_000])
def test_log_takes_datetimes_only(store: ChronoStore, bound: str, moment: Any) -> None:
    store.put(ALICE, "a", {"v": 1})
    with pytest.raises(InvalidRequestError, match="must be a datetime") as info:
        store.log(ALICE, **{bound: moment})
    assert is_typed(info.value, ValueError)
    assert "fromisoformat" in str(info.value)
    since = datetime(2000, 1, 1, tzinfo=timezone.utc)
    assert [c.version for c in store.log(ALICE, since=since)] == [1]


# -- keys ------------------------------------------------------------------------


def test_history_refuses_a_key_that_is_not_a_string(store: ChronoStore) -> None:
    store.put(ALICE, "5", {"v": 1})
    with pytest.raises(InvalidValueError, match="keys are strings, got 5"):
        store.history(ALICE, 5)  # type: ignore[arg-type]
    assert [v.version for v in store.history(ALICE, "5")] == [1]


# -- filters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "filter",
    [
        {"$or": [{"price": 5}, {"price": 7}]},
        {"$and": [{"price": 5}]},
    ],
    ids=["$or", "$and"],  # a comparison with NaN: tests/test_drop_in.py
)
def test_a_filter_that_could_only_match_nothing_is_refused(
    store: ChronoStore, filter: dict[str, Any]
) -> None:
    store.put(ALICE, "a", {"price": 5, "profile": {"age": 3}})
    with pytest.raises(InvalidFilterError) as info:
        store.batch([PutOp(ALICE, "b", {"price": 7}), SearchOp(ALICE, filter=filter)])
    assert is_typed(info.value, ValueError)
    assert store.head(ALICE) == 1


@pytest.mark.parametrize(
    ("filter", "keys", "sqlitestore_too"),
    [
        ({"price": {"$lt": 10**100}}, ["a", "b"], True),
        ({"price": {"$gt": -(10**100)}}, ["a", "b"], True),
        ({"price": {"$gte": 2**63}}, [], True),
        ({"price": 10**100}, [], True),
        ({"price": {"$ne": 10**100}}, ["a", "b"], True),
        ({"price": {"$lt": math.inf}}, ["a", "b"], True),
        # SqliteStore raises OverflowError here; ChronoStore still compares.
        ({"price": {"$lt": 10**400}}, ["a", "b"], False),
    ],
    ids=["lt-googol", "gt-minus-googol", "gte-2^63", "eq", "ne", "lt-inf", "lt-10^400"],
)
def test_huge_numbers_in_filters_compare_like_sqlitestore(
    store: ChronoStore, filter: dict[str, Any], keys: list[str], sqlitestore_too: bool
) -> None:
    store.put(ALICE, "a", {"price": 5})
    store.put(ALICE, "b", {"price": 2**62})
    assert sorted(item.key for item in store.search(ALICE, filter=filter)) == keys
    if not sqlitestore_too:
        return
    with SqliteStore.from_conn_string(":memory:") as control:
        control.setup()
        control.put(ALICE, "a", {"price": 5})
        control.put(ALICE, "b", {"price": 2**62})
        assert sorted(i.key for i in control.search(ALICE, filter=filter)) == keys


# -- the database file -----------------------------------------------------------


def test_from_path_on_a_file_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my notes")
    with pytest.raises(StorageError, match="is a file; a store is a directory") as info:
        ChronoStore.from_path(path)
    assert is_typed(info.value, OSError)
    assert path.read_text() == "my notes"


def test_from_path_on_the_database_file_names_its_directory(tmp_path: Path) -> None:
    ChronoStore.from_path(tmp_path, scope_depth=2).close()
    before = fingerprint(tmp_path)
    with pytest.raises(StorageError, match=f"pass its directory, {tmp_path}"):
        ChronoStore.from_path(tmp_path / DATABASE_FILE)
    assert fingerprint(tmp_path) == before


def test_a_file_that_is_not_a_database_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / DATABASE_FILE).write_text("not a database, just text\n" * 200)
    before = fingerprint(tmp_path)
    with pytest.raises(StorageError, match="it is not a SQLite database") as info:
        ChronoStore.from_path(tmp_path)
    assert is_typed(info.value, OSError)
    assert fingerprint(tmp_path) == before


async def test_a_closed_store_says_so(store_path: Path) -> None:
    store = ChronoStore.from_path(store_path, scope_depth=2)
    store.put(ALICE, "a", {"v": 1})
    view = store.as_of(ALICE, 1)
    store.close()
    store.close()  # twice is fine
    calls = [
        lambda: store.get(ALICE, "a"),
        lambda: store.put(ALICE, "b", {"v": 2}),
        lambda: store.log(ALICE),
        lambda: store.rollback(ALICE, to=0),
        lambda: view.get(ALICE, "a"),
        lambda: store.wait_for_index(timeout=1),  # not "caught up"
    ]
    for call in calls:
        with pytest.raises(StorageError, match="is closed: open it again"):
            call()
    with pytest.raises(StorageError, match="is closed"):
        await store.aget(ALICE, "a")
    with ChronoStore.from_path(store_path) as reopened:
        assert reopened.head(ALICE) == 1


def test_read_only_opens_a_store_another_process_is_writing(tmp_path: Path) -> None:
    writer = ChronoStore.from_path(tmp_path, scope_depth=2)
    writer.put(ALICE, "a", {"v": 1})
    writer.put(ALICE, "a", {"v": 2})  # in the -wal file while the writer is open
    with ChronoStore.from_path(tmp_path, read_only=True) as reader:
        assert reader.get(ALICE, "a").value == {"v": 2}  # type: ignore[union-attr]
        assert [c.version for c in reader.log(ALICE)] == [2, 1]
        assert reader.as_of(ALICE, 1).get(ALICE, "a").value == {"v": 1}  # type: ignore[union-attr]
        writes = [
            lambda: reader.put(ALICE, "b", {"v": 3}),
            lambda: reader.rollback(ALICE, to=1),
            lambda: reader.reset(ALICE, to=1),
            lambda: reader.rollback(ALICE, to=1, dry_run=True),
            lambda: reader.resolve(ALICE, "undo the last change"),
            lambda: reader.sweep_ttl(),
        ]
        for write in writes:
            with pytest.raises(ReadOnlyError, match="open read-only") as info:
                write()
            assert is_typed(info.value, TypeError)
        writer.put(ALICE, "c", {"v": 4})
        assert reader.head(ALICE) == 3  # it sees later writes
    assert writer.head(ALICE) == 3
    writer.close()


def test_read_only_refuses_a_missing_store_and_an_index(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="there is no store at"):
        ChronoStore.from_path(tmp_path / "nowhere", read_only=True)
    assert not (tmp_path / "nowhere").exists()
    ChronoStore.from_path(tmp_path, scope_depth=2).close()
    with pytest.raises(ConfigError, match="leave index out"):
        ChronoStore.from_path(tmp_path, read_only=True, index={"fields": ["text"]})


# Runs in the child that sees the store on read-only media; prints what happened.
_READ_ONLY_CHILD = """
import json, sys
from langgraph_chronomem import ChronoStore
path, alice = sys.argv[1], ("memories", "alice")
seen = {}
try:
    ChronoStore.from_path(path)
except Exception as exc:
    seen["default"] = [type(exc).__name__, str(exc)]
with ChronoStore.from_path(path, read_only=True) as store:
    seen["get"] = store.get(alice, "a").value
    seen["search"] = [item.key for item in store.search(alice)]
    seen["log"] = [commit.version for commit in store.log(alice)]
    seen["past"] = store.as_of(alice, 1).get(alice, "a").value
    seen["history"] = [v.version for v in store.history(alice, "a")]
    try:
        store.put(alice, "b", {"v": 3})
    except Exception as exc:
        seen["put"] = [type(exc).__name__, str(exc)]
print(json.dumps(seen))
"""

# Runs in the child whose store sits on a 2 MB tmpfs; prints what happened.
_FULL_DISK_CHILD = """
import json, os, sys
from langgraph.store.base import PutOp
from langgraph_chronomem import ChronoStore
disk, alice = sys.argv[1], ("memories", "alice")
seen = {}
store = ChronoStore.from_path(os.path.join(disk, "store"), scope_depth=2)
store.put(alice, "a", {"v": 1})
filler = os.path.join(disk, "filler")
with open(filler, "wb", buffering=0) as f:
    try:
        while True:
            f.write(bytes(65536))
    except OSError:
        pass
big = {"text": "x" * 300_000}
try:
    store.batch([PutOp(alice, "a", {"v": 2}), PutOp(alice, "big", big)])
except Exception as exc:
    seen["full"] = [type(exc).__name__, str(exc)]
seen["head"] = store.head(alice)
seen["a"] = store.get(alice, "a").value
seen["big"] = store.get(alice, "big") is not None
os.remove(filler)
store.put(alice, "big", big)
seen["after"] = [store.head(alice), store.get(alice, "big") is not None]
store.close()
print(json.dumps(seen))
"""


def run_with_mount(mount: str, child: str, *args: str) -> dict[str, Any]:
    """Run `child` (Python source) in a process with its own mount table, after
    the shell command `mount`; return the JSON it prints. Skips where the OS
    does not let this user make a mount namespace."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs util-linux's unshare")
    flags = ["--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        flags.append("--map-root-user")
    probe = subprocess.run(
        [unshare, *flags, "sh", "-c", mount], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount in a namespace here: {probe.stderr.strip()}")
    script = f'{mount} && exec "$0" -c "$@"'
    done = subprocess.run(
        [unshare, *flags, "sh", "-c", script, sys.executable, child, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_store_on_read_only_media_opens_read_only(tmp_path: Path) -> None:
    media = tmp_path / "media"
    with ChronoStore.from_path(media, scope_depth=2) as store:
        store.put(ALICE, "a", {"v": 1})
        store.put(ALICE, "a", {"v": 2})
    before = fingerprint(media)
    where = shlex.quote(str(media))
    seen = run_with_mount(
        f"mount --bind -o ro {where} {where}", _READ_ONLY_CHILD, str(media)
    )
    kind, message = seen["default"]
    assert kind == "StorageError" and "open it with read_only=True" in message
    assert seen["get"] == {"v": 2}
    assert seen["search"] == ["a"]
    assert seen["log"] == [2, 1]
    assert seen["past"] == {"v": 1}
    assert seen["history"] == [2, 1]
    assert seen["put"][0] == "ReadOnlyError"
    assert fingerprint(media) == before


def test_a_full_disk_is_a_storage_error_and_writes_nothing(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    seen = run_with_mount(
        f"mount -t tmpfs -o size=2m tmpfs {shlex.quote(str(disk))}",
        _FULL_DISK_CHILD,
        str(disk),
    )
    kind, message = seen["full"]
    assert kind == "StorageError"
    assert "the disk is full" in message and "nothing was written" in message
    assert (seen["head"], seen["a"], seen["big"]) == (1, {"v": 1}, False)
    assert seen["after"] == [2, True]  # space freed: the store works on


# -- schemas from newer versions -------------------------------------------------


def record_step(db: Path, name: str, version: str | None) -> None:
    """Record a migration step as a newer langgraph-chronomem would."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO chronomem_migrations (name, applied_at, package_version) "
            "VALUES (?, '2999-01-01T00:00:00+00:00', ?)",
            (name, version),
        )
    conn.close()


def test_a_database_from_a_newer_version_names_the_version_to_install(
    store_path: Path,
) -> None:
    with ChronoStore.from_path(store_path, scope_depth=2) as store:
        store.put(ALICE, "a", {"v": 1})
    db = store_path / DATABASE_FILE
    record_step(db, "0042_clustered_items", "9.1.0")
    before = fingerprint(store_path)
    with pytest.raises(ConfigError, match=r"langgraph-chronomem>=9\.1\.0") as info:
        ChronoStore.from_path(store_path)
    assert "0042_clustered_items" in str(info.value)
    assert is_typed(info.value, ValueError)
    with pytest.raises(ConfigError, match=r"9\.1\.0"):
        ChronoStore.from_path(store_path, read_only=True)
    assert fingerprint(store_path) == before


def drop_recorded_versions(db: Path) -> None:
    """Give the database the record table of before steps recorded versions."""
    with sqlite3.connect(db) as conn:
        conn.executescript(
            """
            CREATE TABLE old (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
            INSERT INTO old SELECT name, applied_at FROM chronomem_migrations;
            DROP TABLE chronomem_migrations;
            ALTER TABLE old RENAME TO chronomem_migrations;
            """
        )
    conn.close()


def test_a_newer_record_table_without_versions_still_refuses(store_path: Path) -> None:
    ChronoStore.from_path(store_path, scope_depth=2).close()
    drop_recorded_versions(store_path / DATABASE_FILE)
    with sqlite3.connect(store_path / DATABASE_FILE) as conn:
        conn.execute(
            "INSERT INTO chronomem_migrations VALUES ('0042_future', '2999-01-01')"
        )
    conn.close()
    with pytest.raises(ConfigError, match="pip install -U langgraph-chronomem"):
        ChronoStore.from_path(store_path)


def test_an_old_record_table_gains_versions_on_its_next_step(store_path: Path) -> None:
    ChronoStore.from_path(store_path, scope_depth=2).close()
    drop_recorded_versions(store_path / DATABASE_FILE)
    with ChronoStore.from_path(store_path) as store:
        ChronoCheckpointer(store)  # applies the checkpointer's first step
    with sqlite3.connect(store_path / DATABASE_FILE) as conn:
        rows = dict(
            conn.execute("SELECT name, package_version FROM chronomem_migrations")
        )
    conn.close()
    assert rows["0001_versioned_log"] is None
    assert rows["checkpoint_0001_tables"] is not None


def test_each_component_checks_its_own_steps(store_path: Path) -> None:
    with ChronoStore.from_path(store_path, scope_depth=2) as store:
        ChronoCheckpointer(store)
    record_step(store_path / DATABASE_FILE, "checkpoint_0042_future", "9.2.0")
    with ChronoStore.from_path(store_path) as store:  # the log's steps are all known
        store.put(ALICE, "a", {"v": 1})
        with pytest.raises(ConfigError, match=r">=9\.2\.0"):
            ChronoCheckpointer(store)
        assert store.head(ALICE) == 1


# -- closing ---------------------------------------------------------------------


def open_files() -> Counter[str]:
    """What this process's file descriptors point at."""
    found: Counter[str] = Counter()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone
            found[os.readlink(f"/proc/self/fd/{fd}")] += 1
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_close_releases_chroma_and_its_files(tmp_path: Path) -> None:
    def use_once(path: Path) -> None:
        index = {"dims": 10, "embed": toy_embed, "fields": ["text"]}
        store = ChronoStore.from_path(path, scope_depth=2, index=index)  # type: ignore[arg-type]
        store.put(ALICE, "a", {"text": "hello world"})
        assert store.search(ALICE, query="hello")[0].key == "a"
        store.close()

    use_once(tmp_path / "warm")  # imports and one-time pools open their own files
    gc.collect()
    before = open_files()
    use_once(tmp_path / "measured")
    gc.collect()
    assert open_files() - before == Counter()


# -- views and reset -------------------------------------------------------------


def test_a_view_of_a_version_that_reset_destroyed_raises(store: ChronoStore) -> None:
    store.put(ALICE, "city", {"city": "Boston"})
    store.put(ALICE, "city", {"city": "Paris"})
    store.put(ALICE, "pet", {"kind": "cat"})
    at_1, at_2, at_0 = (
        store.as_of(ALICE, 1),
        store.as_of(ALICE, 2),
        store.as_of(ALICE, 0),
    )
    store.reset(ALICE, to=1)
    store.put(ALICE, "city", {"city": "Rome"})  # a new v2
    with pytest.raises(VersionNotFound, match="destroyed by a reset") as info:
        at_2.get(ALICE, "city")
    assert is_typed(info.value, KeyError)
    with pytest.raises(VersionNotFound):
        at_2.search(ALICE)
    with pytest.raises(VersionNotFound):
        asyncio.run(at_2.aget(ALICE, "city"))
    assert at_1.get(ALICE, "city").value == {"city": "Boston"}  # type: ignore[union-attr]
    assert at_0.search(ALICE) == []
    fresh = store.as_of(ALICE, 2)
    assert fresh.get(ALICE, "city").value == {"city": "Rome"}  # type: ignore[union-attr]
