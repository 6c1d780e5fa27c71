"""What is embedded of items and changes, and the vectors kept in memory so
nothing is embedded twice: those a write computed before it committed, and
those a follower embedded ahead of the catch-up that writes them to Chroma.

The lock that lives here, `EmbeddingCache._lock`, guards those kept vectors
and the generation counter; held for a dictionary's work alone, never while
embedding or waiting for another lock (taken inside any other of the vector
side's, see `search/vectors.py`).

    >>> from langgraph.store.base import ensure_embeddings
    >>> cache = EmbeddingCache(ensure_embeddings(lambda ts: [[1.0, 0.0]] * len(ts)))
    >>> cache.remember({"Paris": [0.0, 1.0]})  # a write computed it
    >>> cache.embed(["Paris", "Rome"])
    [[0.0, 1.0], [1.0, 0.0]]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import get_text_at_path, tokenize_path

from langgraph_chronomem.engine.rows import ChangeRow

__all__ = ["AHEAD_MOST", "EmbeddingCache", "ItemTexts", "Recent", "change_text"]

AHEAD_MOST = 20_000  # change vectors `embed_ahead` keeps (about 30 MB)


class ItemTexts:
    """What is embedded of an item: (field label, text) pairs for a value.

    Needs no Chroma, so a write can find its texts (and embed them before its
    transaction) while a Chroma server is down.

        >>> texts = ItemTexts(["text", "tags[*]"])
        >>> texts({"text": "Paris", "tags": ["city", "home"]}, None)
        [('text', 'Paris'), ('tags[*].0', 'city'), ('tags[*].1', 'home')]
        >>> texts({"text": "Paris"}, False), ItemTexts(None)({"text": "Paris"}, None)
        ([], [])

    Args:
        fields: JSON paths embedded by default (`index["fields"]`), `None`
            when items are not indexed.
    """

    def __init__(self, fields: Sequence[str] | None) -> None:
        self.fields = None if fields is None else list(fields)
        self._paths = [(f, tokenize_path(f) if f != "$" else "$") for f in fields or ()]

    def __call__(
        self, value: Mapping[str, Any], index: Sequence[str] | bool | None
    ) -> list[tuple[str, str]]:
        """The pairs for one value. `index` is the put's argument: `None` for
        the default fields, `False` for nothing, or its own field paths."""
        if index is False or self.fields is None:
            return []
        paths = self._paths if index is None else [(f, tokenize_path(f)) for f in index]  # type: ignore[union-attr]
        texts = []
        for field, path in paths:
            found = get_text_at_path(value, path)
            texts += [
                (f"{field}.{i}" if len(found) > 1 else field, t)
                for i, t in enumerate(found)
            ]
        return texts


def change_text(row: ChangeRow) -> str:
    """The text a change's vector is made of: what it left, in its context."""
    return f"{row.text.new} {row.text.context}"


class EmbeddingCache:
    """The model, and vectors computed before their commits' catch-up, by
    text: (the generation they were kept in, the vector as float32, a
    quarter of a list of floats' size while it waits).

    A catch-up takes the `generation` before it reads the log; when it finds
    nothing left to apply, every vector kept by then has been written (or its
    item written again since), and it forgets them (`forget_remembered`,
    `forget_embedded_ahead`).

    Args:
        embeddings: What turns text into vectors.
    """

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings
        self._lock = threading.Lock()
        self._generation = 0
        self._remembered: dict[str, tuple[int, np.ndarray]] = {}  # by writes
        self._ahead: dict[str, tuple[int, np.ndarray]] = {}  # by `embed_ahead`
        self.ahead_seq = 0  # the commit seq the changes were embedded ahead up to

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for `texts`, reusing those writes computed (`remember`)
        and those embedded ahead (each used once)."""
        with self._lock:
            known = {
                t: self._remembered[t][1].tolist()
                for t in texts
                if t in self._remembered
            }
            for text in texts:
                if text in self._ahead and text not in known:
                    known[text] = self._ahead.pop(text)[1].tolist()
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known.update(
                zip(missing, self.embeddings.embed_documents(missing), strict=True)
            )
        return [list(known[t]) for t in texts]

    def remember(self, known: Mapping[str, list[float]]) -> None:
        """Keep the vectors a write computed before it committed, for the
        catch-up that applies its commit: nothing is embedded twice."""
        if not known:
            return
        with self._lock:
            self._generation += 1
            for text, vector in known.items():
                self._remembered[text] = (
                    self._generation,
                    np.asarray(vector, dtype=np.float32),
                )

    @property
    def generation(self) -> int:
        """The generation of the vectors kept last."""
        with self._lock:
            return self._generation

    def forget_remembered(self, upto: int) -> None:
        """Drop the vectors writes computed up to generation `upto`: the
        item catch-up that took it found nothing left to apply."""
        with self._lock:
            self._remembered = _newer(self._remembered, upto)

    def forget_embedded_ahead(self, upto: int) -> None:
        """Drop the change vectors embedded ahead up to generation `upto`:
        the change catch-up that took it found nothing left to apply."""
        with self._lock:
            self._ahead = _newer(self._ahead, upto)

    def ahead_from(self) -> int | None:
        """The commit seq embedding ahead goes on from, or `None` while
        `AHEAD_MOST` vectors are kept already."""
        with self._lock:
            return None if len(self._ahead) >= AHEAD_MOST else self.ahead_seq

    @property
    def has_ahead(self) -> bool:
        """Whether vectors embedded ahead wait for their catch-up."""
        return bool(self._ahead)

    def embed_ahead(self, texts: Iterable[str], seq: int) -> None:
        """Embed those of `texts` not embedded ahead yet, and keep them, as
        the changes of the commits up to `seq`."""
        with self._lock:
            missing = [t for t in texts if t not in self._ahead]
        vectors = self.embeddings.embed_documents(missing) if missing else []
        with self._lock:
            self._generation += 1
            for text, vector in zip(missing, vectors, strict=True):
                self._ahead[text] = (
                    self._generation,
                    np.asarray(vector, dtype=np.float32),
                )
            self.ahead_seq = max(self.ahead_seq, seq)


def _newer(
    kept: dict[str, tuple[int, np.ndarray]], upto: int
) -> dict[str, tuple[int, np.ndarray]]:
    return {text: entry for text, entry in kept.items() if entry[0] > upto}


K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """At most `most` entries, the least recently used dropped first: the
    vectors a search keeps of texts it embedded.

        >>> kept = Recent[str, int](most=1)
        >>> kept.keep({"a": 1}); kept.keep({"b": 2})
        >>> kept.get("a"), kept.get("b")
        (None, 2)
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self._lock = threading.Lock()  # a dictionary's work alone
        self._kept: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The entry kept of `key`, if any."""
        with self._lock:
            value = self._kept.get(key)
            if value is not None:
                self._kept.move_to_end(key)
            return value

    def keep(self, entries: Mapping[K, V]) -> None:
        """Keep these entries."""
        with self._lock:
            self._kept.update(entries)
            for key in entries:
                self._kept.move_to_end(key)
            while len(self._kept) > self.most:
                self._kept.popitem(last=False)
