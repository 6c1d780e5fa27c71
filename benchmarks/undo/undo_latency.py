"""Natural-language undo latency: `ChronoStore.resolve` at 1k and 10k commits, by stage.

Builds one store per size from a synthetic year of memory writes
(`benchmarks/undo/undo_workload.py`: the target user's scope holds N commits, three
other users' scopes N/4 each), pays and reports the one-off costs (model loads,
the first full-text and Chroma catch-up of every change, the first resolve),
then times `store.resolve(scope, request)` for a fixed set of requests, many
times, end to end and stage by stage. Target: p50 under 150 ms at 10k commits.

    python benchmarks/undo/undo_latency.py --quick       # 1k commits, 2 rounds (~1 min)
    python benchmarks/undo/undo_latency.py               # 1k and 10k commits (~6 min)
    python benchmarks/undo/undo_latency.py --out benchmarks/results/undo.md \\
        --json benchmarks/results/undo.json --profile benchmarks/results/undo.prof.txt
    git worktree add /tmp/before <commit>
    python benchmarks/undo/undo_latency.py --sizes 10000 --before /tmp/before

With `--before DIR` (a `git worktree` of an older commit) it instead compares the
two trees on one store: the older tree builds and indexes it (a newer one can
open an older schema, not the reverse), each tree gets a copy, and every round
times every request once in a fresh process of each tree (a fork of one that
imported that tree's package once), the order alternating, so the two run side
by side under the same load. It also checks that both trees resolve every
request alike: the same candidates, actions, targets, counts and previewed
items.

Method: each store is written with `synchronous=NORMAL` (building is not what is
measured), closed, and reopened as it comes (`synchronous=FULL`). Every request is
resolved once untimed (the warm-up) before timing. Each round then runs, for every
size in turn, every request twice: once plain (the end-to-end numbers) and once
with the stage shims of `benchmarks/undo/undo_stages.py` installed (the stage numbers);
the start of the request list rotates each round. Times are `perf_counter_ns`
around `store.resolve`.

The reranker is whatever the store's `ResolverConfig` loads here, named in the
report. With `CHRONOMEM_OFFLINE=1` and no FlashRank model in its cache the default
does not rerank; `--reranker minilm-bi-encoder-pair-scorer` times the provisioned
stand-in (all-MiniLM-L6-v2 as a bi-encoder behind FlashRank's interface, NOT a
cross-encoder: its cost is not that of FlashRank's default cross-encoder).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.harness.report import (
    PACKAGES,
    Stats,
    add_output_arguments,
    header,
    load_average,
    machine_info,
    markdown_table,
    progress,
    reranker_description,
    size_label,
    write_report,
)
from benchmarks.harness.trees import TreeProcess
from benchmarks.undo.undo_stages import CALLER, WORKER, StageClock, install
from benchmarks.undo.undo_workload import REQUESTS, TARGET, build_history, scope_of
from langgraph_chronomem import ChronoStore
from langgraph_chronomem.search.intent import parse
from langgraph_chronomem.search.resolve import Resolution, Resolver, ResolverConfig

__all__ = ["FULL", "QUICK", "Settings", "main"]

ROOT = Path(__file__).resolve().parents[2]  # this tree

TARGET_MS = 150.0  # the project's target: resolve p50 at 10k commits
TARGET_SIZE = 10_000
BENCH_PACKAGES = (*PACKAGES, "chromadb", "FlashRank", "onnxruntime", "tokenizers")


@dataclass(frozen=True)
class Settings:
    """How much to measure.

    Attributes:
        sizes: Commits in the target user's scope, one store per size.
        rounds: Timed rounds; each resolves every request plain and shimmed.
        seed: Seed of the workload.
        rerank_top: `ResolverConfig.rerank_top` (candidates FlashRank reranks);
            `None` keeps the package's default.
        reranker: `ResolverConfig.reranker`; `None` keeps the package's default.
    """

    sizes: tuple[int, ...]
    rounds: int
    seed: int = 20240601
    rerank_top: int | None = None
    reranker: str | None = None

    @property
    def resolver(self) -> ResolverConfig:
        """The undo search's knobs, as the stores are opened with them."""
        knobs: dict[str, Any] = {
            "rerank_top": self.rerank_top,
            "reranker": self.reranker,
        }
        return ResolverConfig(**{k: v for k, v in knobs.items() if v is not None})


FULL = Settings(sizes=(1_000, 10_000), rounds=10)
QUICK = Settings(sizes=(1_000,), rounds=2)


@dataclass
class Subject:
    """One store under test and what was measured on it."""

    size: int
    path: Path
    store: ChronoStore | None = None
    heads: dict[str, int] = field(default_factory=dict)
    build_s: float = 0.0
    one_off_ms: dict[str, float] = field(default_factory=dict)
    one_off_cpu_ms: dict[str, float] = field(default_factory=dict)
    plain: dict[int, list[int]] = field(default_factory=dict)  # request -> ns
    cpu: dict[int, list[int]] = field(default_factory=dict)  # process CPU, ns
    shimmed: dict[int, list[int]] = field(default_factory=dict)
    stages: dict[int, list[dict[str, int]]] = field(default_factory=dict)
    outcome: dict[int, Resolution] = field(default_factory=dict)


def _ms(seconds_or_ns: float, *, ns: bool = False) -> float:
    return seconds_or_ns / 1e6 if ns else seconds_or_ns * 1e3


@contextmanager
def _stopwatch(
    into: dict[str, float], name: str, cpu: dict[str, float] | None = None
) -> Iterator[None]:
    """Wall time into `into[name]`, and process CPU time (all threads) into `cpu`."""
    started, cpu_started = time.perf_counter(), time.process_time()
    yield
    into[name] = _ms(time.perf_counter() - started)
    if cpu is not None:
        cpu[name] = _ms(time.process_time() - cpu_started)


# -- building and warming up ----------------------------------------------------


def build(subject: Subject, settings: Settings, log: Callable[[str], None]) -> None:
    """Write the history with `synchronous=NORMAL` (reopened as it comes to time)."""
    started = time.perf_counter()
    with ChronoStore.from_path(
        subject.path, scope_depth=2, synchronous="NORMAL"
    ) as store:
        subject.heads = build_history(
            store,
            subject.size,
            seed=settings.seed,
            progress=lambda done, total: log(
                f"  {subject.size}: {done}/{total} commits"
            ),
        )
    subject.build_s = time.perf_counter() - started
    log(f"built {subject.size}: {subject.heads} in {subject.build_s:.1f}s")


def warm_up(
    subject: Subject,
    settings: Settings,
    process: dict[str, float],
    process_cpu: dict[str, float],
) -> None:
    """Open the store and pay every one-off cost, each timed on its own.

    `process` (wall) and `process_cpu` collect the costs paid once per process
    (model loads), by the first store that pays them.
    """
    spent, cpu = subject.one_off_ms, subject.one_off_cpu_ms
    with _stopwatch(spent, "open store", cpu):
        store = ChronoStore.from_path(subject.path, resolver=settings.resolver)
        subject.store = store
    search, engine = store._search, store._engine  # reaching in on purpose
    first = not process
    once, once_cpu = (process, process_cpu) if first else ({}, None)
    with _stopwatch(once, "embedding model load + first embed", once_cpu):
        search.embeddings.embed_query("warm up")
    opened = (process, process_cpu) if first else (spent, cpu)
    with _stopwatch(opened[0], "Chroma client + collection open", opened[1]):
        vectors = search.vectors()
    with _stopwatch(once, "reranker load", once_cpu):
        search.resolver().load_ranker()
    fts = _stopwatch(spent, "word index catch-up (all changes)", cpu)
    with fts, engine.transaction(write=True) as tx:
        indexed = tx.index_changes()
    with _stopwatch(spent, "Chroma catch-up (embed all changes)", cpu):
        embedded = vectors.catch_up(items=False)
    spent["commits indexed"] = indexed
    spent["commits embedded"] = embedded
    scope = scope_of(TARGET)
    with _stopwatch(spent, "first resolve (search request)", cpu):
        store.resolve(scope, REQUESTS[0].text)
    for i, request in enumerate(REQUESTS):  # the warm-up: every request once
        subject.outcome[i] = store.resolve(scope, request.text)


# -- timing ---------------------------------------------------------------------


def run_rounds(
    subjects: Sequence[Subject],
    settings: Settings,
    loads: list[float],
    log: Callable[[str], None],
) -> None:
    """Every round: each size in turn, every request plain then shimmed.

    `loads` receives the 1-minute load average at the start of each round.
    """
    clock = StageClock()
    stores = [s.store for s in subjects if s.store is not None]
    count = len(REQUESTS)
    for round_ in range(settings.rounds):
        started = time.perf_counter()
        loads.append(os.getloadavg()[0])
        order = [(round_ + i) % count for i in range(count)]
        turn = subjects if round_ % 2 == 0 else list(reversed(subjects))
        for subject in turn:
            assert subject.store is not None
            store, scope = subject.store, scope_of(TARGET)
            gc.collect()
            for i in order:
                text = REQUESTS[i].text
                cpu_before, before = time.process_time_ns(), time.perf_counter_ns()
                store.resolve(scope, text)
                after, cpu_after = time.perf_counter_ns(), time.process_time_ns()
                subject.plain.setdefault(i, []).append(after - before)
                subject.cpu.setdefault(i, []).append(cpu_after - cpu_before)
            uninstall = install(stores, clock)
            try:
                for i in order:
                    text = REQUESTS[i].text
                    clock.start()
                    before = time.perf_counter_ns()
                    store.resolve(scope, text)
                    took = time.perf_counter_ns() - before
                    subject.shimmed.setdefault(i, []).append(took)
                    subject.stages.setdefault(i, []).append(clock.stop())
            finally:
                uninstall()
        seconds = time.perf_counter() - started
        log(f"round {round_ + 1}/{settings.rounds}: {seconds:.1f}s")


def profile(subject: Subject, rounds: int) -> str:
    """cProfile of `rounds` passes over the search requests: caller and dense worker.

    cProfile sees one thread, so the worker's `_dense` gets a profiler of its own.
    """
    assert subject.store is not None
    store, scope = subject.store, scope_of(TARGET)
    caller, worker = cProfile.Profile(), cProfile.Profile()
    dense = Resolver._dense

    def profiled_dense(self: Resolver, *args: Any) -> Any:
        worker.enable()
        try:
            return dense(self, *args)
        finally:
            worker.disable()

    Resolver._dense = profiled_dense  # type: ignore[method-assign,assignment]
    try:
        texts = [r.text for r in REQUESTS if r.path == "search"]
        caller.enable()
        for _ in range(rounds):
            for text in texts:
                store.resolve(scope, text)
        caller.disable()
    finally:
        Resolver._dense = dense  # type: ignore[method-assign]
    out = io.StringIO()
    for title, prof in (("caller thread", caller), ("dense worker thread", worker)):
        for order in ("cumulative", "tottime"):
            out.write(
                f"==== {title}, by {order} ({rounds} x {len(texts)} resolves) ====\n"
            )
            pstats.Stats(prof, stream=out).sort_stats(order).print_stats(30)
    return out.getvalue()


# -- the report -----------------------------------------------------------------


def _fmt(ms: float) -> str:
    return f"{ms:.1f}" if ms < 100 else f"{ms:,.0f}"


def _cell(samples_ns: Sequence[int]) -> str:
    if not samples_ns:
        return "n/a"
    stats = Stats.of(samples_ns)
    return f"{_fmt(stats.median_us / 1000)} / {_fmt(stats.p95_us / 1000)}"


def _paths(path: str | None) -> list[int]:
    return [i for i, r in enumerate(REQUESTS) if path is None or r.path == path]


def _pool(by_request: Mapping[int, list[Any]], indexes: Sequence[int]) -> list[Any]:
    return [x for i in indexes for x in by_request.get(i, [])]


def stage_samples(subject: Subject, stage: str) -> list[int]:
    """The stage's time in every shimmed resolve of a search request (0 if unused)."""
    return [s.get(stage, 0) for s in _pool(subject.stages, _paths("search"))]


def render(
    subjects: Sequence[Subject],
    process: Mapping[str, float],
    process_cpu: Mapping[str, float],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
    loads: Sequence[float],
) -> str:
    sizes = [size_label(s.size) for s in subjects]
    search, shortcut = _paths("search"), _paths("shortcut")
    lines = [
        *header("Undo latency", command, machine),
        f"Reranker: {reranker_description(settings.resolver)}. "
        "Embeddings: all-MiniLM-L6-v2 (int8 ONNX).",
        "",
        f"Resolver: `{settings.resolver}`.",
        "",
        f"Each store holds N commits in the scope {scope_of(TARGET)!r} "
        "(`scope_depth=2`) and N/4 in each of three other users' scopes, written "
        "through the public API over one simulated year "
        "(`benchmarks/undo/undo_workload.py`). "
        f"{len(REQUESTS)} requests ({len(search)} with a topic, which run the whole "
        f"pipeline; {len(shortcut)} without one or redo), each resolved "
        f"{settings.rounds} times plain after one untimed warm-up.",
        "",
        "### End to end",
        "",
        "`store.resolve(scope, request)`, ms, p50 / p95, no shims installed. "
        "Wall time, except the CPU row: process CPU time (all threads) of the same "
        "calls, which other work on the machine inflates far less. 1-minute load "
        f"average at the start of the rounds: {_load_range(loads)}.",
        "",
    ]
    rows = []
    for name, indexes in (
        ("search requests", search),
        ("no-topic and redo", shortcut),
        ("all requests", _paths(None)),
    ):
        rows.append([name, *(_cell(_pool(s.plain, indexes)) for s in subjects)])
    rows.insert(
        1,
        ["search requests, CPU", *(_cell(_pool(s.cpu, search)) for s in subjects)],
    )
    rows.append(
        [
            "search requests, with stage shims",
            *(_cell(_pool(s.shimmed, search)) for s in subjects),
        ]
    )
    lines += markdown_table(["requests", *(f"{n} commits" for n in sizes)], rows)
    lines += ["", *target_lines(subjects), ""]
    lines += [
        "### Stages (search requests)",
        "",
        "ms per resolve, p50 / p95 / mean, from the shimmed runs "
        "(`benchmarks/undo/undo_stages.py`: the package's own functions wrapped with "
        "timers at run time). Exclusive times: the caller's stages add up to the call. "
        "The dense worker runs while BM25 does; only `dense wait` is on the critical "
        "path.",
        "",
    ]
    rows = []
    for stage, what in {**CALLER, **WORKER}.items():
        if stage == "shortcut":
            continue
        cells = []
        for s in subjects:
            samples = stage_samples(s, stage)
            mean = sum(samples) / len(samples) / 1e6 if samples else 0.0
            cells.append(f"{_cell(samples)} / {_fmt(mean)}")
        label = f"{stage} (worker)" if stage in WORKER else stage
        rows.append([label, what, *cells])
    lines += markdown_table(
        ["stage", "what", *(f"{n} commits" for n in sizes)], rows, align="ll"
    )
    lines += [
        "",
        "### Per request",
        "",
        "ms, p50 / p95 (plain). `decided`: the resolver "
        "would act; else it offers the candidates. `matched`: the best candidate's "
        "commit at the largest size.",
        "",
    ]
    rows = []
    largest = subjects[-1]
    for i, request in enumerate(REQUESTS):
        intent = parse(request.text)
        outcome = largest.outcome.get(i)
        best = outcome.best if outcome else None
        matched = (
            "-" if best is None else f"v{best.commit.version}: {best.summary[:60]}"
        )
        decided = "yes" if outcome and outcome.decided else "no"
        rows.append(
            [
                f'"{request.text}"',
                intent.kind,
                *(_cell(s.plain.get(i, [])) for s in subjects),
                decided,
                matched.replace("|", "/"),
            ]
        )
    align = "ll" + "r" * len(sizes) + "ll"
    lines += markdown_table(
        ["request", "intent", *sizes, "decided", "matched"], rows, align=align
    )
    lines += [
        "",
        "### One-off costs",
        "",
        "Paid once and excluded from the timings above: wall and process CPU "
        "time (all threads), ms.",
        "",
    ]
    rows = [
        [name, "process", _fmt(ms), _fmt(process_cpu.get(name, 0.0))]
        for name, ms in process.items()
    ]
    for s in subjects:
        for name, value in s.one_off_ms.items():
            shown = f"{value:,}" if name.startswith("commits") else _fmt(value)
            cpu = s.one_off_cpu_ms.get(name)
            rows.append(
                [name, size_label(s.size), shown, "" if cpu is None else _fmt(cpu)]
            )
        rows.append(
            [
                "build (not timed in the tables; synchronous=NORMAL)",
                size_label(s.size),
                _fmt(s.build_s * 1000),
                "",
            ]
        )
    lines += markdown_table(["cost", "store", "wall", "CPU"], rows, align="ll")
    return "\n".join(lines) + "\n"


def _load_range(loads: Sequence[float]) -> str:
    return f"{min(loads):.1f} to {max(loads):.1f}" if loads else "not measured"


def _target(subjects: Sequence[Subject]) -> tuple[str, float | None]:
    at = [s for s in subjects if s.size == TARGET_SIZE]
    if not at:
        return f"not measured (no {size_label(TARGET_SIZE)} store in this run)", None
    p50 = Stats.of(_pool(at[0].plain, _paths("search"))).median_us / 1000
    return f"{_fmt(p50)} ms", p50


def target_lines(subjects: Sequence[Subject]) -> list[str]:
    measured, p50 = _target(subjects)
    verdict = "n/a" if p50 is None else "PASS" if p50 < TARGET_MS else "FAIL"
    return markdown_table(
        ["target", "measured", "limit", "result"],
        [
            [
                f"resolve p50 at {size_label(TARGET_SIZE)} commits (search requests)",
                measured,
                f"{TARGET_MS:.0f} ms",
                verdict,
            ]
        ],
        align="lrrl",
    )


def to_json(
    subjects: Sequence[Subject],
    process: Mapping[str, float],
    process_cpu: Mapping[str, float],
    settings: Settings,
    machine: Mapping[str, str],
    command: str,
    loads: Sequence[float],
) -> str:
    """Everything the markdown shows, and every raw sample, as JSON."""

    def stats(samples: Sequence[int]) -> dict[str, Any] | None:
        return asdict(Stats.of(samples)) if samples else None

    measured, p50 = _target(subjects)
    return json.dumps(
        {
            "command": command,
            "machine": machine,
            "settings": asdict(settings),
            "reranker": reranker_description(settings.resolver),
            "resolver": asdict(settings.resolver),
            "one_off_ms": {"process": dict(process)},
            "one_off_cpu_ms": {"process": dict(process_cpu)},
            "load_average_1min_per_round": list(loads),
            "target": {
                "p50_ms_limit": TARGET_MS,
                "measured": measured,
                "passed": None if p50 is None else p50 < TARGET_MS,
            },
            "sizes": {
                str(s.size): {
                    "heads": s.heads,
                    "build_s": s.build_s,
                    "one_off_ms": s.one_off_ms,
                    "one_off_cpu_ms": s.one_off_cpu_ms,
                    "end_to_end": {
                        path or "all": stats(_pool(s.plain, _paths(path)))
                        for path in ("search", "shortcut", None)
                    },
                    "end_to_end_cpu": {
                        path or "all": stats(_pool(s.cpu, _paths(path)))
                        for path in ("search", "shortcut", None)
                    },
                    "stages_search": {
                        stage: stats(stage_samples(s, stage))
                        for stage in {**CALLER, **WORKER}
                    },
                    "requests": [
                        {
                            "text": request.text,
                            "path": request.path,
                            "intent": parse(request.text).kind,
                            "plain_ns": s.plain.get(i, []),
                            "cpu_ns": s.cpu.get(i, []),
                            "shimmed_ns": s.shimmed.get(i, []),
                            "stages_ns": s.stages.get(i, []),
                            "decided": bool(s.outcome.get(i) and s.outcome[i].decided),
                            "candidates": len(s.outcome[i].candidates)
                            if i in s.outcome
                            else 0,
                        }
                        for i, request in enumerate(REQUESTS)
                    ],
                }
                for s in subjects
            },
        },
        indent=2,
        default=str,
    )


# -- two trees side by side (`--before`) ------------------------------------------


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def compare(
    settings: Settings, before: Path, parent: Path, log: Callable[[str], None]
) -> tuple[str, bool]:
    """This tree against `before` on one store per size; the markdown, and
    whether both resolved every request alike."""
    trees = {"after": ROOT, "before": before.resolve()}
    child = Path(__file__).resolve().parent / "_latency_child.py"
    with ExitStack() as stack:  # both import meanwhile
        process = {
            label: stack.enter_context(TreeProcess(child, tree))
            for label, tree in trees.items()
        }
        return _compare(settings, process, parent, log)


def _compare(
    settings: Settings,
    process: Mapping[str, TreeProcess],
    parent: Path,
    log: Callable[[str], None],
) -> tuple[str, bool]:
    trees = list(process)
    lines: list[str] = []
    alike = True
    for size in settings.sizes:
        built = parent / f"built-{size}"
        process["before"].call("_build", str(built), str(size), str(settings.seed))
        for label in trees:
            shutil.copytree(built, parent / f"{label}-{size}")
        log(f"built {size} with {process['before'].tree}")
        taken: dict[str, dict[int, list[float]]] = {label: {} for label in trees}
        cpu: dict[str, dict[int, list[float]]] = {label: {} for label in trees}
        outcomes: dict[str, Any] = {}
        loads = []
        for round_ in range(settings.rounds):
            loads.append(os.getloadavg()[0])
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for label in order:
                got = process[label].call(
                    "_time", str(parent / f"{label}-{size}"), "1", str(round_)
                )
                outcomes.setdefault(label, got["outcomes"])
                for i, ms in got["ms"].items():
                    taken[label].setdefault(int(i), []).extend(ms)
                for i, ms in got["cpu_ms"].items():
                    cpu[label].setdefault(int(i), []).extend(ms)
            log(f"round {round_ + 1}/{settings.rounds} at {size}")
        same = outcomes["after"] == outcomes["before"]
        alike = alike and same
        lines += [
            f"### {size_label(size)} commits",
            "",
            f"1-minute load average at the start of the rounds: {_load_range(loads)}. "
            f"Both trees resolved every request alike: {'yes' if same else 'NO'}.",
            "",
        ]
        rows = []
        for name, indexes, samples in (
            ("search requests", _paths("search"), taken),
            ("search requests, process CPU", _paths("search"), cpu),
            ("no-topic and redo", _paths("shortcut"), taken),
            ("all requests", _paths(None), taken),
        ):
            cells = []
            for label in trees:
                pooled = _pool(samples[label], indexes)
                cells.append(
                    f"{_fmt(statistics.median(pooled))} / {_fmt(_p(pooled, 0.95))}"
                )
            rows.append([name, *cells])
        for i in _paths("search"):
            cells = [
                f"{_fmt(statistics.median(taken[t][i]))} / {_fmt(max(taken[t][i]))}"
                for t in trees
            ]
            rows.append([f'"{REQUESTS[i].text}"', *cells])
        lines += markdown_table(
            ["requests (ms, p50 / p95; one request: p50 / max)", *trees], rows
        )
        lines.append("")
    return "\n".join(lines), alike


# -- command line ---------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k commits, 2 rounds")
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="commits in the target scope"
    )
    parser.add_argument("--rounds", type=int, help="timed rounds over all requests")
    parser.add_argument("--seed", type=int, help="workload seed")
    parser.add_argument(
        "--rerank-top",
        type=int,
        help="ResolverConfig.rerank_top: candidates reranked (default: the package's)",
    )
    parser.add_argument(
        "--reranker",
        help="ResolverConfig.reranker, e.g. minilm-bi-encoder-pair-scorer "
        "(default: the package's)",
    )
    add_output_arguments(parser)
    parser.add_argument(
        "--profile",
        type=Path,
        help="also cProfile the largest size; write the stats here",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="an older tree (a git worktree) to time side by side with this one",
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    overrides = {
        "sizes": tuple(sorted(set(args.sizes))) if args.sizes else None,
        "rounds": args.rounds,
        "seed": args.seed,
        "rerank_top": args.rerank_top,
        "reranker": args.reranker,
    }
    settings = replace(
        settings, **{k: v for k, v in overrides.items() if v is not None}
    )
    if min(settings.sizes) < 20 or settings.rounds < 1:
        parser.error("sizes must be >= 20 and --rounds >= 1")
    if settings.rerank_top is not None and settings.rerank_top < 0:
        parser.error("--rerank-top must be >= 0")
    return settings, args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print the markdown report to stdout (progress to stderr)."""
    settings, args = parse_args(argv)
    command = shlex.join(sys.orig_argv if argv is None else ["undo_latency.py", *argv])

    log = progress
    if args.before:
        with tempfile.TemporaryDirectory(prefix="chronomem-undo-", dir=args.dir) as tmp:
            machine = machine_info(Path(tmp), BENCH_PACKAGES)
            table, alike = compare(settings, args.before, Path(tmp), log)
        machine["load average at end"] = load_average()
        markdown = "\n".join(
            [*header("Undo latency, two trees", command, machine), "", table]
        )
        print(markdown)
        if args.out:
            write_report(args.out, markdown)
        return 0 if alike else 1

    process: dict[str, float] = {}
    process_cpu: dict[str, float] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="chronomem-undo-", dir=args.dir) as tmp:
        machine = machine_info(Path(tmp), BENCH_PACKAGES)
        log(f"measuring in {tmp}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
        subjects = [
            Subject(size, Path(tmp) / f"store-{size}") for size in settings.sizes
        ]
        try:
            for subject in subjects:
                build(subject, settings, log)
                warm_up(subject, settings, process, process_cpu)
                log(f"warmed up {subject.size}: {subject.one_off_ms}")
            run_rounds(subjects, settings, loads, log)
            if args.profile:
                write_report(
                    args.profile, profile(subjects[-1], max(2, settings.rounds // 3))
                )
                log(f"profile written to {args.profile}")
        finally:
            for subject in subjects:
                if subject.store is not None:
                    subject.store.close()
    machine["load average at end"] = load_average()
    markdown = render(subjects, process, process_cpu, settings, machine, command, loads)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        result = to_json(
            subjects, process, process_cpu, settings, machine, command, loads
        )
        write_report(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
