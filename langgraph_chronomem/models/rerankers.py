"""The rerankers: FlashRank `Ranker`s, one per model and cache folder, and the undo
search's default (FlashRank's cross-encoder, or none)."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from langgraph_chronomem.errors import ConfigError, ModelUnavailableError
from langgraph_chronomem.models.files import (
    PAIR_DIR,
    PAIR_SCORER,
    TOKENIZER_FILES,
    cache_root,
    models_dir,
    offline_mode,
    problems_under,
    unavailable,
)

if TYPE_CHECKING:
    from flashrank import Ranker

logger = logging.getLogger(__name__)


def _missing_files(folder: Path, name: str) -> list[str]:
    """What keeps `folder` from being a complete FlashRank model `name`."""
    from flashrank.Config import listwise_rankers, model_file_map

    wanted = [model_file_map[name]]
    if name not in listwise_rankers:
        wanted.extend(TOKENIZER_FILES)
    missing = [f for f in wanted if not _nonempty(folder / f)]
    if (folder.parent / f"{name}.zip").exists():  # FlashRank deletes it once extracted
        missing.append(f"{name}.zip left over, extraction unfinished")
    return missing


def _nonempty(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


_rankers: dict[tuple[str, Path], Ranker] = {}
_rankers_lock = threading.Lock()


def load_ranker(
    model_name: str | None = None,
    cache_dir: str | Path | None = None,
    *,
    fallback: bool = True,
) -> Ranker:
    """A FlashRank `Ranker`, one per (model, cache folder), its folder checked first.

    A folder missing an expected file (an interrupted download) is removed and
    fetched again, not trusted; the pair scorer is re-copied from `<dir>`.

    Args:
        model_name: a FlashRank model name or `PAIR_SCORER`; default per the rule.
        cache_dir: FlashRank's cache; default `.../langgraph-chronomem/flashrank`,
            or `<dir>/flashrank` for the pair scorer.
        fallback: when `model_name` is `None` and FlashRank's default model
            cannot be had, use the pair scorer (as the rule says) or, if
            `False`, raise `ModelUnavailableError`.

    Raises:
        ConfigError: `model_name` is not a model FlashRank knows.
        ModelUnavailableError: the model is missing and cannot be fetched (offline,
            or the download failed), or it does not load.

        >>> from flashrank import RerankRequest
        >>> passages = [{"id": 1, "text": "moved to Paris"}, {"id": 2, "text": "a cat"}]
        >>> ranked = load_ranker().rerank(RerankRequest("my city", passages))
        >>> [p["id"] for p in ranked]
        [1, 2]
    """
    import flashrank.Config

    offline, known = offline_mode(), flashrank.Config.model_file_map
    known.setdefault(PAIR_SCORER, "model.onnx")
    if model_name is not None and model_name not in known:
        raise ConfigError(
            f"unknown FlashRank model {model_name!r}; known: {sorted(known)}"
        )
    defaulted = model_name is None
    if model_name is None:
        model_name = flashrank.Config.default_model
        folder = Path(cache_dir or cache_root() / "flashrank") / model_name
        if offline and _missing_files(folder, model_name):
            if not fallback:
                raise unavailable(
                    f"FlashRank model {model_name!r}",
                    f"CHRONOMEM_OFFLINE=1 and it is not in {folder.parent}",
                )
            model_name = PAIR_SCORER
    if cache_dir is None:
        pair = model_name == PAIR_SCORER
        cache_dir = models_dir() / "flashrank" if pair else cache_root() / "flashrank"
    cache = Path(cache_dir).expanduser().resolve()
    try:
        with _rankers_lock:
            if (model_name, cache) not in _rankers:
                _rankers[model_name, cache] = _open_ranker(model_name, cache, offline)
            return _rankers[model_name, cache]
    except ModelUnavailableError as exc:
        provisioned = (models_dir() / PAIR_DIR).is_dir()
        if not (fallback and defaulted and offline is None and provisioned):
            raise
        logger.warning(
            "%s is unavailable, using %s instead: %s", model_name, PAIR_SCORER, exc
        )
        stand_in = load_ranker(PAIR_SCORER)
        with _rankers_lock:  # once per process: do not retry the hub on every call
            _rankers[model_name, cache] = stand_in
        return stand_in


_no_rerank: dict[Path, str] = {}  # FlashRank cache -> why its default is not had


def _flashrank_cache(cache_dir: str | Path | None) -> Path:
    return Path(cache_dir or cache_root() / "flashrank").expanduser().resolve()


def missing_default_reranker(cache_dir: str | Path | None) -> list[str]:
    """What keeps FlashRank's default model in `cache_dir` from being complete."""
    import flashrank.Config

    name = flashrank.Config.default_model
    return _missing_files(_flashrank_cache(cache_dir) / name, name)


def default_ranker(cache_dir: str | Path | None = None) -> Ranker | None:
    """The undo search's reranker: FlashRank's default cross-encoder, or `None`.

    `None` where that model cannot be had (offline and not in `cache_dir`, or its
    download failing): the undo search then keeps the fused BM25 + dense order.
    One warning per process and cache folder says so, and how to get the rerank;
    a failed download is not tried again. The offline stand-in is never chosen
    here: it would only repeat the dense stage.

    Args:
        cache_dir: FlashRank's cache; default `.../langgraph-chronomem/flashrank`.

        >>> ranker = default_ranker()  # offline here, with no cross-encoder cached
        >>> ranker is None or ranker.model_dir.name == "ms-marco-TinyBERT-L-2-v2"
        True
    """
    import flashrank.Config

    cache, name = _flashrank_cache(cache_dir), flashrank.Config.default_model
    if cache in _no_rerank:
        return None
    try:
        return load_ranker(None, cache, fallback=False)
    except ModelUnavailableError as exc:
        if exc.__cause__ is None:  # offline, not in the cache
            why = f"is not in {cache} and CHRONOMEM_OFFLINE=1 downloads nothing"
        else:
            why = (
                f"could not be downloaded or loaded ({type(exc.__cause__).__name__}; "
                "CHRONOMEM_OFFLINE=1 stops the attempts)"
            )
        with _rankers_lock:
            first = cache not in _no_rerank
            _no_rerank[cache] = why
        if first:
            logger.warning(
                "undo search ranks by BM25 + dense search, fused, with no "
                "cross-encoder rerank: FlashRank's %s %s. To rerank, copy that "
                "model's folder into %s from a machine that has it "
                "(docs/how-to/reranker.md#cache)",
                name, why, cache,
            )  # fmt: skip
        return None


def _open_ranker(name: str, cache: Path, offline: bool | None) -> Ranker:
    from flashrank import Ranker

    folder, source = cache / name, models_dir() / PAIR_DIR
    if name == PAIR_SCORER:
        logger.warning(
            "reranking with %s: all-MiniLM-L6-v2 as a bi-encoder through FlashRank "
            "(scores from cosine similarity), NOT an MS MARCO cross-encoder", name
        )  # fmt: skip
        if problems := problems_under(source):
            raise unavailable(name, problems)
    missing = folder != source and folder.exists() and _missing_files(folder, name)
    if missing:
        logger.warning("removing incomplete FlashRank model %s: %s", folder, missing)
        shutil.rmtree(folder)
        (cache / f"{name}.zip").unlink(missing_ok=True)
    if name == PAIR_SCORER and not folder.exists():
        shutil.copytree(source, folder)
    elif offline and not folder.exists():
        where = f"CHRONOMEM_OFFLINE=1 and it is not in {cache}"
        raise unavailable(f"FlashRank model {name!r}", where)
    try:
        return Ranker(model_name=name, cache_dir=str(cache), log_level="WARNING")
    except Exception as exc:
        raise unavailable(f"FlashRank model {name!r} in {cache}", repr(exc)) from exc
