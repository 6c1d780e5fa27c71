"""What a store's `index=` means: the model and its name, the fields embedded,
how scores are given; recorded in the log, so a store opened without one (the
`chronomem` command) reopens it as it was.

`embed` may be a LangChain `Embeddings`, a sync or async function of a list of
texts, or a provider string (`"openai:text-embedding-3-small"`); without it the
default is all-MiniLM-L6-v2 (Chroma's own ONNX model, see `models/`).

    >>> settings = IndexSettings.of({"fields": "text", "distance_type": "l2"})
    >>> settings.fields, settings.distance, embedder_name(settings.embed)
    (['text'], 'l2', 'chroma:all-MiniLM-L6-v2')
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, cast

from langchain_core.embeddings import Embeddings
from langgraph.store.base import ensure_embeddings
from langgraph.store.base.embed import EmbeddingsLambda

from langgraph_chronomem import models
from langgraph_chronomem.engine.protocol import LogEngine
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.search.hits import DISTANCES, Distance

__all__ = [
    "INDEX_META",
    "AsyncOnlyEmbeddings",
    "IndexSettings",
    "caller_loop",
    "embedder_name",
    "embeddings_for",
]

INDEX_META = "index"  # the index settings a store was last opened with

caller_loop: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar(
    "chronomem_caller_loop", default=None
)
"""The event loop of the async store call whose worker thread is running."""


class AsyncOnlyEmbeddings(Embeddings):
    """An `embed` given as an async function, usable from sync code paths.

    Async store calls run their work in a worker thread; there, embedding goes
    back to the caller's event loop, so such a model serves `arollback` and
    `aundo` as well as `aput`. A sync call has no loop to go back to.
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        loop = caller_loop.get()
        if loop is None:
            raise ConfigError(
                "this store's index embeds with an async function: use the store's "
                "async methods (aput, asearch, arollback, aundo...)"
            )
        coroutine = self.inner.aembed_documents(texts)
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await self.inner.aembed_query(text)


def embeddings_for(embed: Any) -> Embeddings:
    """The model `embed` (an `index["embed"]`) names, loaded; the default's
    for `None`."""
    if embed is None:
        return models.default_embeddings()
    embeddings = ensure_embeddings(embed)
    if (
        isinstance(embeddings, EmbeddingsLambda)
        and getattr(embeddings, "func", None) is None
    ):
        return AsyncOnlyEmbeddings(embeddings)
    return embeddings


def embedder_name(embed: Any) -> str:
    """A name for the model `embed` names, which the collections' names carry."""
    if embed is None:
        return models.DEFAULT_EMBEDDER
    if isinstance(embed, str):
        return embed
    model = getattr(embed, "model", None) or getattr(embed, "model_name", None)
    kind = (
        embed if callable(embed) and not isinstance(embed, Embeddings) else type(embed)
    )
    name = f"{kind.__module__}.{kind.__qualname__}"
    return f"{name}:{model}" if isinstance(model, str) else name


def _fields(index: Mapping[str, Any]) -> list[str]:
    """The JSON paths to embed: `fields`, or `text_fields` as LangGraph's
    `SqliteStore` and `PostgresStore` read it, else the whole value (`$`).

    Raises:
        ConfigError: If they are not JSON paths (strings).
    """
    fields = index.get("fields") or index.get("text_fields") or ["$"]
    fields = [fields] if isinstance(fields, str) else fields
    if not isinstance(fields, (list, tuple)) or not all(
        isinstance(f, str) for f in fields
    ):
        raise ConfigError(f"index fields are JSON paths (strings), got {fields!r}")
    return list(fields)


def _distance(index: Mapping[str, Any]) -> Distance:
    """The `distance_type` scores are given in, as `PostgresStore` gives them.

    Raises:
        ConfigError: For a type `PostgresStore` does not have.
    """
    distance = index.get("distance_type", "cosine")
    if distance not in DISTANCES:
        raise ConfigError(
            f"distance_type is one of {', '.join(DISTANCES)}, got {distance!r}"
        )
    return cast(Distance, distance)


@dataclass(frozen=True)
class IndexSettings:
    """A store's index: `embed` (`None`: the default model), the JSON paths
    embedded for items (`fields`, `None` when items are not indexed), the
    `distance` scores are given in, and why meaning operations refuse
    (`unusable`), if they do."""

    embed: Any
    fields: list[str] | None
    distance: Distance
    unusable: str | None = None

    @staticmethod
    def of(index: Mapping[str, Any] | None) -> IndexSettings:
        """The settings of LangGraph's `IndexConfig` (`None`: item changes
        are embedded, for `undo`, and no item).

        Raises:
            ConfigError: If its fields or distance type are not ones a store has.
        """
        if index is not None and not isinstance(index, Mapping):
            raise ConfigError(f"index is an IndexConfig dict, got {index!r}")
        fields = None if index is None else _fields(index)
        distance = _distance(index or {})
        embed = None if index is None else index.get("embed")
        return IndexSettings(embed, fields, distance)

    def settled(self, engine: LogEngine, *, given: bool) -> IndexSettings:
        """Record these settings in the log if `given`; else the settings the
        log recorded, if any.

        Opened without `index` (e.g. by the `chronomem` command), a store whose
        index uses the default model or a provider string reopens it as it was.
        One whose model is a Python object cannot be rebuilt from a name: its
        meaning operations then refuse, instead of re-embedding everything with
        another model under a running application's feet.
        """
        reopenable = self.embed is None or isinstance(self.embed, str)
        with engine.transaction(write=given) as tx:
            stored = tx.meta(INDEX_META)
            if given:
                tx.set_meta(INDEX_META, json.dumps({
                    "embedder": embedder_name(self.embed),
                    "embed": self.embed if reopenable else None,
                    "reopenable": reopenable,
                    "fields": self.fields,
                    "distance_type": self.distance,
                }))  # fmt: skip
        if given or stored is None:
            return self
        settings = json.loads(stored)
        found = replace(self, distance=settings.get("distance_type", self.distance))
        if settings["reopenable"]:
            return replace(found, embed=settings["embed"], fields=settings["fields"])
        return replace(
            found,
            unusable=(
                f"this store's index embeds with {settings['embedder']}; open it "
                "with the same index=... to search by meaning or undo in words"
            ),
        )
