"""The embedding model: Chroma's all-MiniLM-L6-v2, once per process, as Chroma's
function and as LangChain `Embeddings`."""

from __future__ import annotations

import functools
import logging
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from langgraph_chronomem.models.files import (
    CHROMA_DIR,
    SHA256,
    models_dir,
    offline_mode,
    problems_under,
    unavailable,
)

if TYPE_CHECKING:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

logger = logging.getLogger(__name__)


@functools.cache
def _embedding_class() -> Any:
    import numpy as np
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    class ChronoMiniLM(ONNXMiniLM_L6_V2):
        """Chroma's all-MiniLM-L6-v2, read from `model_path` when one is given.

        It keeps Chroma's `name()` and config, so collections stay compatible. Two
        changes: a failed download or load raises `ModelUnavailableError`, and each
        batch is padded to its longest text, not to 256 tokens (padding is masked,
        so vectors match Chroma's within 1e-7; ~10x faster on short texts).
        """

        def __init__(self, model_path: Path | None = None) -> None:
            super().__init__()
            if model_path is not None:  # instance attribute; the class keeps its own
                self.DOWNLOAD_PATH = model_path

        def _download_model_if_not_exists(self) -> None:
            try:
                super()._download_model_if_not_exists()
                self.model  # noqa: B018 - open the session inside the guard
            except Exception as exc:
                where = f"all-MiniLM-L6-v2 at {self.DOWNLOAD_PATH}"
                raise unavailable(where, repr(exc)) from exc

        @functools.cached_property
        def model(self) -> Any:
            """Chroma's session, whose threads sleep while they wait for work
            instead of spinning: on a busy machine (or at a low priority, as
            a store's background follower embeds) a spinning thread burns
            the core its peer needs (measured: the same vectors in a quarter
            of the CPU time in the background, 30% faster in the foreground
            at a load of 7 on 2 cores)."""
            ort = self.ort

            def options() -> Any:
                made = ort.SessionOptions()
                made.add_session_config_entry("session.intra_op.allow_spinning", "0")
                return made

            quiet = {**vars(ort), "SessionOptions": options}
            self.ort = types.SimpleNamespace(**quiet)  # type: ignore[assignment]
            try:
                return ONNXMiniLM_L6_V2.model.func(self)  # type: ignore[attr-defined]
            finally:
                self.ort = ort

        @functools.cached_property
        def tokenizer(self) -> Any:
            tokenizer = ONNXMiniLM_L6_V2.tokenizer.func(self)  # type: ignore[attr-defined]
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # batch's longest
            return tokenizer

        def _forward(self, documents: list[str], batch_size: int = 32) -> Any:
            by_length = sorted(range(len(documents)), key=lambda i: len(documents[i]))
            vectors = np.empty((len(documents), 384), dtype=np.float32)
            for start in range(0, len(documents), batch_size):
                rows = by_length[start : start + batch_size]
                encoded = self.tokenizer.encode_batch([documents[i] for i in rows])
                ids = np.array([e.ids for e in encoded], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
                feed = {"input_ids": ids, "attention_mask": mask,
                        "token_type_ids": np.zeros_like(ids)}  # fmt: skip
                hidden = self.model.run(None, feed)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
                vectors[rows] = self._normalize(pooled)
            return vectors

    return ChronoMiniLM


@functools.cache
def default_embedding_function() -> ONNXMiniLM_L6_V2:
    """The one all-MiniLM-L6-v2 embedding function of this process (module rule).

    Raises:
        ModelUnavailableError: offline mode is on and no complete model is found,
            or the provisioned files do not verify.

        >>> default_embedding_function() is default_embedding_function()
        True
    """
    cls, offline, path = _embedding_class(), offline_mode(), models_dir() / CHROMA_DIR
    if offline is False or (offline is None and not path.exists()):
        return cls()  # type: ignore[no-any-return]  # Chroma's cache and download
    if offline and not path.exists():
        own = cls()
        if all((Path(own.DOWNLOAD_PATH) / "onnx" / n).is_file() for n in SHA256):
            return own  # type: ignore[no-any-return]
        raise unavailable("all-MiniLM-L6-v2", f"CHRONOMEM_OFFLINE=1, no {path}")
    if problems := problems_under(path):
        raise unavailable(f"all-MiniLM-L6-v2 at {path}", problems)
    logger.info("embeddings: all-MiniLM-L6-v2 (int8 ONNX) from %s", path)
    return cls(path)  # type: ignore[no-any-return]


@functools.cache
def common_words() -> frozenset[str] | None:
    """The whole words of all-MiniLM-L6-v2's vocabulary (BERT's uncased
    WordPiece, about 24,700 words, names of well-known places included): the
    words the undo search counts as ordinary, so that one outside them
    ("Athlone", "ramen") must be held by a change for it to act alone. `None`
    when the model's files are not on this machine: nothing is fetched for it.

        >>> words = common_words()
        >>> words is None or ("milan" in words and "athlone" not in words)
        True
    """
    own = Path(_embedding_class().DOWNLOAD_PATH)
    for folder in (models_dir() / CHROMA_DIR, own):
        vocab = folder / "onnx" / "vocab.txt"
        if vocab.is_file():
            lines = vocab.read_text(encoding="utf-8").split()
            return frozenset(w for w in lines if w.isalpha() and not w.startswith("["))
    return None


DEFAULT_EMBEDDER = "chroma:all-MiniLM-L6-v2"
"""The name the default embedding model goes by in collection metadata."""


def load_embeddings(embeddings: Embeddings) -> None:
    """Load what `embeddings` needs before its first call: the default
    model's files and session (a few seconds on a busy machine). Other models
    are left as they are (a provider's is a client, and a call costs).

        >>> load_embeddings(default_embeddings())  # the next call does not wait for it
    """
    if isinstance(embeddings, _ChromaEmbeddings):
        embeddings.load()


def default_embeddings() -> Embeddings:
    """The default embedding function as LangChain `Embeddings` (what stores use).

    >>> len(default_embeddings().embed_query("I moved to Paris"))
    384
    """
    return _ChromaEmbeddings()


class _ChromaEmbeddings(Embeddings):
    """`default_embedding_function()` behind LangChain's `Embeddings` interface."""

    def load(self) -> None:
        """Read the model's files and open its session now, not at the first
        call: a background thread does it where no one waits for it."""
        function = default_embedding_function()
        function._download_model_if_not_exists()  # opens the session: see there
        function.tokenizer  # noqa: B018 - read the tokenizer's files

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [vector.tolist() for vector in default_embedding_function()(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
