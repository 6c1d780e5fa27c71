"""Numbers into words: latency statistics, targets, the machine, the markdown report."""

from __future__ import annotations

import argparse
import math
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from langgraph_chronomem import models
from langgraph_chronomem.search.index import load_reranker
from langgraph_chronomem.search.resolve import ResolverConfig

__all__ = [
    "Stats",
    "Target",
    "add_output_arguments",
    "header",
    "load_average",
    "machine_info",
    "markdown_table",
    "progress",
    "render_markdown",
    "reranker_description",
    "size_label",
    "write_report",
]

PACKAGES = (
    "langgraph-chronomem",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "orjson",
)


@dataclass(frozen=True)
class Stats:
    """Latency of one op on one store: count, median and 95th percentile in µs."""

    n: int
    median_us: float
    p95_us: float

    @classmethod
    def of(cls, samples_ns: Sequence[int]) -> Stats:
        """Summarise nanosecond samples; p95 is the nearest-rank percentile."""
        ordered = sorted(samples_ns)
        p95 = ordered[math.ceil(0.95 * len(ordered)) - 1]
        return cls(len(ordered), statistics.median(ordered) / 1000, p95 / 1000)


@dataclass(frozen=True)
class Target:
    """A performance target: what was measured, and the worst ratio vs its limit."""

    name: str
    measured: str
    limit: float
    worst: float | None

    @property
    def passed(self) -> bool | None:
        """`None` when it could not be measured in this run."""
        return None if self.worst is None else self.worst <= self.limit

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.passed]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _filesystem(directory: Path) -> str:
    """The type of the filesystem holding `directory` (Linux only), e.g. `ext4`."""
    try:
        mounts = [
            line.split() for line in Path("/proc/mounts").read_text().splitlines()
        ]
    except OSError:
        return "unknown"
    path = str(directory.resolve())
    best = max(
        (m for m in mounts if path == m[1] or path.startswith(m[1].rstrip("/") + "/")),
        key=lambda m: len(m[1]),
        default=None,
    )
    return best[2] if best else "unknown"


def _git_commit() -> str:
    """The checkout measured; `-dirty` when it has uncommitted changes."""
    try:
        return subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other work on the machine skews timings."""
    return " / ".join(f"{load:.2f}" for load in os.getloadavg())


def machine_info(directory: Path, packages: Sequence[str] = PACKAGES) -> dict[str, str]:
    """What the numbers were measured on; `directory` is where the stores live.

    `packages` are the distributions whose installed versions are listed.
    """
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlite": sqlite3.sqlite_version,
        "storage": f"{directory} ({_filesystem(directory)})",
        "load average at start": load_average(),
        "commit": _git_commit(),
        **{package: _version(package) for package in packages},
    }


def header(title: str, command: str, machine: Mapping[str, str]) -> list[str]:
    """A report's first lines: its title, the command that made it, the machine."""
    return [
        f"## {title}",
        "",
        f"Command: `{command}`",
        "",
        "Machine:",
        "",
        *(f"- {name}: {value}" for name, value in machine.items()),
        "",
    ]


def reranker_description(config: ResolverConfig) -> str:
    """What the undo search's rerank stage runs with `config` here, in words."""
    if not config.rerank_top:
        return "none (`rerank_top=0`)"
    try:
        ranker = load_reranker(config)
    except models.ModelUnavailableError:
        ranker = None
    if ranker is None:
        return (
            "none: FlashRank's cross-encoder cannot be had here (offline), and the "
            "default does not fall back to the stand-in"
        )
    name, version = Path(ranker.model_dir).name, metadata.version("FlashRank")
    if name == models.PAIR_SCORER:
        return (
            f"`{name}` through FlashRank {version}, the offline stand-in: "
            "all-MiniLM-L6-v2 as a bi-encoder behind FlashRank's interface (score = "
            "sigmoid(10 cos - 3)), NOT an MS MARCO cross-encoder, and costlier than "
            "FlashRank's default `ms-marco-TinyBERT-L-2-v2` would be"
        )
    return f"`{name}`, a FlashRank {version} cross-encoder"


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[object]], *, align: str = ""
) -> list[str]:
    """A markdown table's lines. `align` has one letter per column, `l` or `r`;
    columns it does not cover align left if first, else right.

        >>> markdown_table(["size", "p50"], [["1k", "3.0"]])
        ['| size | p50 |', '|---|---:|', '| 1k | 3.0 |']
    """
    align = align or "l"
    letters = [align[i] if i < len(align) else "r" for i in range(len(header))]
    rule = ["---:" if letter == "r" else "---" for letter in letters]
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(rule) + "|",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def _us(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _cell(stats: Stats | None, requested: int) -> str:
    if stats is None:
        return "N/A"
    cell = f"{_us(stats.median_us)} / {_us(stats.p95_us)}"
    return cell + (f" (n={stats.n})" if stats.n < requested else "")


def _ratio(stats: Stats | None, baseline: Stats | None) -> str:
    if stats is None or baseline is None or not baseline.median_us:
        return "N/A"
    return f"{stats.median_us / baseline.median_us:.2f}x"


def size_label(size: int) -> str:
    """`1000` -> `1k`."""
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else str(size)


def render_markdown(
    results: Mapping[int, Mapping[str, Mapping[str, Stats]]],
    targets: Sequence[Target],
    *,
    columns: Mapping[str, str],
    requested: Mapping[str, int],
    baseline: str,
    machine: Mapping[str, str],
    command: str,
    notes: Sequence[str],
) -> str:
    """The report: command, machine, what was measured, one latency table, targets.

    Args:
        results: Stats by memory size, store and phase.
        targets: The evaluated targets.
        columns: Column title per phase, in column order.
        requested: Ops asked for per phase; cells with fewer show their `n`.
        baseline: The store the `x` columns divide by.
        machine: From `machine_info`.
        command: The command line that produced the results.
        notes: Paragraphs saying what each column measures.
    """
    lines = [
        *header("Store operations", command, machine),
        *(line for note in notes for line in (note, "")),
        "Latency per op in µs, median / p95 (`n=` where fewer ops ran than asked). "
        f"`N/A`: the store has no rollback. `x`: median over {baseline}'s.",
        "",
        "| items | store | " + " | ".join(columns.values()) + " | put x | get x |",
        "|---:|---|" + "---:|" * (len(columns) + 2),
    ]
    for size, by_store in results.items():
        base = by_store.get(baseline, {})
        for store, by_phase in by_store.items():
            cells = [_cell(by_phase.get(p), requested[p]) for p in columns]
            ratios = [_ratio(by_phase.get(p), base.get(p)) for p in ("put", "get")]
            lines.append(
                f"| {size_label(size)} | {store} | " + " | ".join(cells + ratios) + " |"
            )
    lines += [
        "",
        "### Targets",
        "",
        "| target | measured | limit | result |",
        "|---|---|---:|---|",
    ]
    lines += [
        f"| {t.name} | {t.measured} | {t.limit}x | {t.verdict} |" for t in targets
    ]
    return "\n".join(lines) + "\n"


def write_report(path: Path, text: str) -> None:
    """Write a report file, making its folder first (`results/` is git-ignored)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """`--dir`, `--out` and `--json`, as every benchmark takes them."""
    parser.add_argument("--dir", type=Path, help="parent of the temporary directory")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")


def progress(message: str) -> None:
    """A progress line, on stderr: the report itself goes to stdout."""
    print(message, file=sys.stderr, flush=True)
