"""Latency of search by meaning as of a past version against HEAD search, in one run.

Issue 35: `store.as_of(scope, v).search(prefix, query=...)` ranks the state at
`v` as the live store ranks that state. It reads the scope's items at `v` from
the log (O(items at v)), reuses the vectors the item collection holds of rows
still at HEAD, and embeds the texts of the others once (kept by text), so its
first query at a version pays for that embedding and the next ones do not.

One scope gets `commits` single-put commits over `items` keys (all-MiniLM-L6-v2,
offline, `fields=["text"]`): each key is rewritten about commits/items times.
For versions near HEAD, in the middle and near the start it counts the items
HEAD holds otherwise (their texts are embedded, unless an earlier query kept
them) and times the first as-of query (cold) and `queries` more (warm), and
`queries` HEAD searches with the same queries, every one with `limit=10`.

    python benchmarks/store/as_of_search.py --quick   # 1k commits (~30 s)
    python benchmarks/store/as_of_search.py           # 10k commits (a few minutes)
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/store/as_of_search.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import random

from benchmarks.harness.report import (
    add_output_arguments,
    header,
    load_average,
    machine_info,
    markdown_table,
    progress,
    write_report,
)
from benchmarks.store.indexed_writes import QUERIES, fact
from langgraph_chronomem import ChronoStore

SCOPE = ("memories", "alice")


def _timed(call: Callable[[], Any]) -> float:
    """Milliseconds `call` took."""
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _summary(samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):.1f} / {p95:.1f}"


def write_history(store: ChronoStore, commits: int, items: int, seed: int) -> None:
    """`commits` puts, one a commit, over `items` keys in random order."""
    rng = random.Random(seed)
    for n in range(commits):
        key = f"m{n % items}" if n < items else f"m{rng.randrange(items)}"
        store.put(SCOPE, key, {"text": fact(rng)})
        if n % 1000 == 999:
            progress(f"  {n + 1} commits")


def not_at_head(store: ChronoStore, version: int) -> int:
    """How many items of the scope at `version` HEAD holds otherwise (their
    texts are what an as-of search embeds)."""
    head = {i.key: i.updated_at for i in store.search(SCOPE, limit=10**9)}
    past = store.as_of(SCOPE, version).search(SCOPE, limit=10**9)
    return sum(head.get(i.key) != i.updated_at for i in past)


def measure(
    store: ChronoStore, commits: int, queries: int
) -> tuple[list[dict[str, Any]], list[float]]:
    """Per version: the cold and warm as-of latencies; and HEAD's."""
    asked = [QUERIES[n % len(QUERIES)] + f" {n}" for n in range(queries)]
    head = [_timed(partial(store.search, SCOPE, query=q, limit=10)) for q in asked]
    rows = []
    for version in (commits - 100, commits // 2, commits // 10):
        view = store.as_of(SCOPE, version)
        embeds = not_at_head(store, version)
        cold = _timed(partial(view.search, SCOPE, query="a new query", limit=10))
        warm = [_timed(partial(view.search, SCOPE, query=q, limit=10)) for q in asked]
        rows.append(
            {"version": version, "embedded": embeds, "cold_ms": cold, "warm_ms": warm}
        )
    return rows, head


def report(
    rows: list[dict[str, Any]],
    head: list[float],
    args: argparse.Namespace,
    machine: dict[str, str],
) -> str:
    command = "python benchmarks/store/as_of_search.py " + shlex.join(sys.argv[1:])
    lines = header(
        "As-of search by meaning against HEAD search",
        command.strip(),
        machine,
    )
    lines += [
        f"{args.commits:,} commits over {args.items:,} keys of one scope; "
        f"{args.queries} queries each, `limit=10`, all-MiniLM-L6-v2 (the query's "
        f"embedding included); load average after: {load_average()}.",
        "",
    ]
    table = [["HEAD search", "", "", _summary(head)]]
    table += [
        [
            f"as_of(v{r['version']:,}).search",
            f"{r['embedded']:,}",
            f"{r['cold_ms']:,.0f}",
            _summary(r["warm_ms"]),
        ]
        for r in rows
    ]
    lines += markdown_table(
        ["search", "items not as at HEAD", "first query (ms)",
         "next queries, median / p95 (ms)"],
        table,
        align="lrrr",
    )  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k commits")
    parser.add_argument("--commits", type=int, help="commits (10k; --quick 1k)")
    parser.add_argument("--items", type=int, help="keys (1k; --quick 200)")
    parser.add_argument("--queries", type=int, default=20, help="timed queries")
    parser.add_argument("--seed", type=int, default=35)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    args.commits = args.commits or (1_000 if args.quick else 10_000)
    args.items = args.items or (200 if args.quick else 1_000)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        where = Path(tmp)
        machine = machine_info(where)
        with ChronoStore.from_path(
            where / "memory", scope_depth=2, index={"fields": ["text"]}
        ) as store:
            progress(f"writing {args.commits:,} commits")
            write_history(store, args.commits, args.items, args.seed)
            store.wait_for_index()
            store.search(SCOPE, query="warm the model up", limit=10)
            rows, head = measure(store, args.commits, args.queries)
        text = report(rows, head, args, machine)
    print(text, end="")
    if args.out:
        write_report(args.out, text)
    if args.json:
        write_report(
            args.json, json.dumps({"rows": rows, "head_ms": head}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
