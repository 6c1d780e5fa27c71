"""Plots of the store benchmark: what each operation costs as memory grows.

Reads the JSON that `benchmarks/store/store_ops.py --json FILE` writes and draws one PNG
per operation (put, get, filtered search, rollback): the median latency against the
number of items in memory, one line per store, on log-log axes, with a band up to
the 95th percentile. Beside the PNGs it keeps a copy of the JSON (`store_ops.json`)
and a Markdown note on the run (`store_ops.run.md`: machine, load, commit), which
docs/benchmark-plots.md includes.

    python benchmarks/store/store_ops.py --json benchmarks/results/store_ops.json
    python benchmarks/harness/plots.py benchmarks/results/store_ops.json  # -> docs/img/

Needs matplotlib, and only for this script: pip install matplotlib.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "img"

# phase -> (file name, title); the phases store_ops.py measures.
PHASES = {
    "put": ("store-put.png", "put: one write"),
    "get": ("store-get.png", "get: one read"),
    "search": ("store-search.png", "filtered search (1% match, limit 10)"),
    "rollback": ("store-rollback.png", "rollback of 100 changed items"),
}
# Store -> (colour, marker); any other store gets matplotlib's next colour.
STYLE = {
    "ChronoStore": ("#d62728", "o"),
    "SqliteStore (WAL)": ("#1f77b4", "s"),
    "SqliteStore (defaults)": ("#17becf", "D"),
    "InMemoryStore": ("#7f7f7f", "^"),
    "Naive snapshot-per-write": ("#ff7f0e", "v"),
}


def load(path: Path) -> dict[str, Any]:
    """The benchmark's JSON, checked for the fields the plots read."""
    data: dict[str, Any] = json.loads(path.read_text())
    if not isinstance(data.get("results"), dict) or not data["results"]:
        raise SystemExit(f"{path}: no 'results'; is it store_ops.py --json output?")
    return data


def series(
    results: Mapping[str, Mapping[str, Mapping[str, Any]]], phase: str
) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """For one phase: store -> [(memory size, stats)], sizes ascending."""
    lines: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for size in sorted(results, key=int):
        for store, phases in results[size].items():
            if phase in phases:
                lines.setdefault(store, []).append((int(size), phases[phase]))
    return lines


def size_label(size: float) -> str:
    return f"{size / 1000:g}k" if size >= 1000 else f"{size:g}"


def caption(data: Mapping[str, Any]) -> str:
    """Where the numbers come from, in one line under each plot."""
    machine = data.get("machine", {})
    settings = data.get("settings", {})
    parts = [
        f"store_ops.py, synchronous={settings.get('synchronous', '?')}",
        f"{machine.get('cpu', '?')} ({machine.get('cores', '?')} cores)",
        f"SQLite {machine.get('sqlite', '?')}",
        f"commit {machine.get('commit', '?')}",
    ]
    return " | ".join(parts)


def draw(data: Mapping[str, Any], phase: str, out: Path) -> Path:
    """One PNG: median latency against memory size per store, band to p95."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    name, title = PHASES[phase]
    lines = series(data["results"], phase)
    wanted = (data.get("settings") or {}).get(
        {"search": "searches", "rollback": "rollbacks"}.get(phase, "ops")
    )
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    sizes: set[int] = set()
    for store, points in lines.items():
        colour, marker = STYLE.get(store, (None, "o"))
        xs = [size for size, _ in points]
        medians = [stats["median_us"] for _, stats in points]
        p95s = [stats["p95_us"] for _, stats in points]
        sizes.update(xs)
        chrono = store == "ChronoStore"
        (line,) = ax.plot(
            xs,
            medians,
            marker=marker,
            color=colour,
            linewidth=2.4 if chrono else 1.5,
            zorder=3 if chrono else 2,
            label=store,
        )
        ax.fill_between(xs, medians, p95s, color=line.get_color(), alpha=0.12)
        for size, stats in points:  # fewer ops than asked: say how many
            if wanted and stats["n"] < wanted:
                ax.annotate(
                    f"n={stats['n']}",
                    (size, stats["median_us"]),
                    textcoords="offset points",
                    xytext=(6, -10),
                    fontsize=7,
                    color=line.get_color(),
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = sorted(sizes)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(x)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: _duration(y)))
    if len(ticks) > 1:
        ax.set_xlim(ticks[0] / 1.5, ticks[-1] * 1.5)
    ax.set_xlabel("items in memory (one scope)")
    ax.set_ylabel("latency per op (median; band to p95)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.text(0.01, 0.01, caption(data), fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, metadata={"Software": None})  # no version stamp: stable files
    plt.close(fig)
    return path


def describe(data: Mapping[str, Any]) -> str:
    """The run behind the plots, as a Markdown list (for docs/benchmark-plots.md)."""
    machine = dict(data.get("machine", {}))
    settings = data.get("settings", {})
    program, _, arguments = str(data.get("command", "?")).partition(" ")
    if Path(program).name.startswith("python"):
        program = "python"  # not this machine's interpreter path
    command = f"{program} {arguments}".replace(str(ROOT) + "/", "").strip()
    lines = [
        f"- Command: `{command}`",
        f"- Settings: sizes {', '.join(map(str, settings.get('sizes', [])))}; "
        f"{settings.get('ops', '?')} puts and gets, {settings.get('searches', '?')} "
        f"searches and {settings.get('rollbacks', '?')} rollbacks per store and size; "
        f"`synchronous={settings.get('synchronous', '?')}`",
    ]
    start = machine.pop("load average at start", None)
    end = machine.pop("load average at end", None)
    if start or end:
        lines.append(
            f"- Load average (1 / 5 / 15 min): {start or '?'} at the start, "
            f"{end or '?'} at the end, on {machine.get('cores', '?')} cores"
        )
    machine.pop("storage", None)  # a temporary directory: says nothing later
    lines.extend(f"- {key}: {value}" for key, value in machine.items())
    if _busy(start, machine.get("cores")) or _busy(end, machine.get("cores")):
        lines.append(
            "\nThe machine was busy during this run (a load average above its core "
            "count): absolute times are inflated, durable writes (fsync) the most. "
            "The stores took turns op by op, so compare them with each other rather "
            "than with another run."
        )
    return "\n".join(lines) + "\n"


def _busy(load: str | None, cores: str | None) -> bool:
    """Whether a "1 / 5 / 15" load average exceeds the core count."""
    try:
        return float(str(load).split("/")[0]) > float(str(cores))
    except ValueError:
        return False


def _duration(microseconds: float) -> str:
    if microseconds >= 1_000_000:
        return f"{microseconds / 1_000_000:g} s"
    if microseconds >= 1000:
        return f"{microseconds / 1000:g} ms"
    return f"{microseconds:g} µs"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "json",
        type=Path,
        nargs="?",
        default=ROOT / "benchmarks" / "results" / "store_ops.json",
        help="store_ops.py --json output (default: benchmarks/results/store_ops.json)",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="default: docs/img/")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plots need matplotlib: pip install matplotlib", file=sys.stderr)
        return 1
    data = load(args.json)
    for phase in PHASES:
        if series(data["results"], phase):
            print(draw(data, phase, args.out))
    copy = args.out / "store_ops.json"
    if args.json.resolve() != copy.resolve():
        copy.write_text(json.dumps(data, indent=2) + "\n")
    (args.out / "store_ops.run.md").write_text(describe(data))
    print(copy, args.out / "store_ops.run.md", sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
