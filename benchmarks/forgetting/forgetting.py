"""What forgetting costs: `redact` of one version and `compact(keep_last=2)`
as the store grows (issue 33, item 3: they should cost what they erase).

A default store (`ChronoStore.from_path(dir, scope_depth=2)`, no `index=`)
holding one user's memory: N commits of one put each over N/10 items (UUID
keys, as LangMem makes them), their values drawn from 64 memory texts (so a
100k-commit store is built in minutes: the texts, not the commits, are
embedded once per batch), one version in the middle holding a secret, and
every change's vector made (`reindex`), as a first undo makes them. Each
store is built once, by the oldest code measured, then copied for every
measurement; each measurement runs in a fresh process (its model
loaded, Chroma open and its follower idle before the clock starts, as in an
app that has undone once), with the code of this checkout and, given
`--before DIR` (a `git worktree` of an earlier commit), that code too,
interleaved in one run (`--quick`, a smoke test, builds and measures in
one process):

- `redact(contains=<secret>)` of that one version, scrub on (the default);
  after it, no file of the store holds the secret's bytes;
- `compact(keep_last=2)` of the user's scope, vacuum on (the default).

    python benchmarks/forgetting/forgetting.py --before /tmp/before      # 1k, 10k, 100k
    python benchmarks/forgetting/forgetting.py --quick                    # 200 commits
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

USER = ("memories", "user")
SECRET = "Zorbanite syndrome"
TOPICS = [
    "sister",
    "spring trip",
    "coast",
    "kids",
    "garden",
    "new job",
    "piano",
    "diet",
]
OPERATIONS = ("redact", "compact")
PLACES = ["Lyon", "Oslo", "Lima", "Quito", "Cairo", "Rome", "Kyoto", "Perth"]


def build(root: Path, commits: int) -> None:
    """The store: `commits` puts, one version holding the secret, one undo."""
    import uuid

    from langgraph_chronomem import ChronoStore

    keys = [str(uuid.UUID(int=n + 1)) for n in range(max(commits // 10, 10))]
    with ChronoStore.from_path(root, scope_depth=2) as store:
        for n in range(commits):
            topic, place = TOPICS[n % 8], PLACES[(n // 8) % 8]
            text = f"User talked about the {topic} while in {place}"
            if n == commits // 2:
                text = f"User was diagnosed with {SECRET}"
            store.put(USER, keys[n % len(keys)], {"content": text})
        # Every change's vector, as after a first undo: made by `reindex`, as
        # every version of the code does (an undo search at 100k commits in
        # one scope fails in Chroma: "too many SQL variables").
        store.reindex()


def holding(root: Path, needle: bytes) -> list[str]:
    """The store's files whose bytes hold `needle`, ignoring case."""
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes().lower()
    )


def worker(operation: str, root: Path) -> dict[str, Any]:
    """One measurement, in this process, on the code `sys.path` finds first."""
    from langgraph_chronomem import ChronoStore

    with ChronoStore.from_path(root) as store:
        # As in an app that has undone once: the model loaded, Chroma open,
        # its follower idle (a newer code may catch up what an older wrote).
        store._search.vectors().embed(["warm up"])
        store.wait_for_index()
        started = time.perf_counter()
        if operation == "redact":
            done = store.redact(USER, contains=SECRET)
            seconds = time.perf_counter() - started
            erased = len(done.versions)
        else:
            found = store.compact(USER, keep_last=2)
            seconds = time.perf_counter() - started
            erased = len(found.versions)
    return {
        "seconds": seconds,
        "erased": erased,
        "secret in": holding(root, SECRET.lower().encode()),
    }


def in_process(code: Path, *args: str) -> Any:
    """Run this script with `args` in a process that imports `code`'s
    `langgraph_chronomem`; what it printed last, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(code), "CHRONOMEM_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, __file__, "--code", str(code), *args],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def quick(commits: int, scratch: Path) -> list[dict[str, Any]]:
    """`--quick`, in this one process: the store built, then `worker` for
    each operation on a copy of it (a process each costs an import of the
    package, Chroma and the model: about 4 s of a smoke test under load)."""
    store = scratch / "store"
    build(store, commits)
    done = []
    for operation in OPERATIONS:
        copy = scratch / operation
        shutil.copytree(store, copy)
        done.append(worker(operation, copy))
    return done


def measure(code: Path, operation: str, store: Path, scratch: Path) -> dict[str, Any]:
    """`worker(operation)` on a copy of `store`, in a process running `code`."""
    copy = scratch / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy)
    # At rest, as an app's files are: else the first fsync of a run writes out
    # the whole copy (80 ms of a 100k store's redaction, none of it its own).
    os.sync()
    try:
        return dict(in_process(code, "--worker", operation, str(copy)))
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def run(
    sizes: Sequence[int],
    repeats: int,
    before: Path | None,
    before_upto: int,
    after: Path = ROOT,
    one_process: bool = False,
) -> list[dict[str, Any]]:
    from benchmarks.harness.report import progress

    results = []
    scratch = Path(tempfile.mkdtemp(prefix="forgetting-"))
    try:
        for size in sizes:
            store = scratch / f"store-{size}"
            codes = {"after": after}
            if before is not None and size <= before_upto:
                codes = {"before": before, **codes}
            # by the oldest code: the newer opens it (and upgrades each copy)
            progress(f"building {size} commits")
            started = time.perf_counter()
            if one_process:
                measured = in_process(after, "--quick-in", str(size), str(scratch))
                built = time.perf_counter() - started  # and measured
            else:
                in_process(next(iter(codes.values())), "--build", str(size), str(store))
                built = time.perf_counter() - started
            for n, operation in enumerate(OPERATIONS):
                samples: dict[str, list[dict[str, Any]]] = {c: [] for c in codes}
                for repeat in range(0 if one_process else repeats):
                    for label, code in codes.items():  # interleaved
                        progress(f"{size}: {operation} {label} #{repeat + 1}")
                        samples[label].append(measure(code, operation, store, scratch))
                if one_process:
                    samples["after"] = [measured[n]]
                for label, runs in samples.items():
                    results.append(
                        {
                            "commits": size,
                            "operation": operation,
                            "code": label,
                            "median (s)": statistics.median(r["seconds"] for r in runs),
                            "runs (s)": [round(r["seconds"], 3) for r in runs],
                            "versions erased": runs[0]["erased"],
                            "files holding the secret": sorted(
                                {f for r in runs for f in r["secret in"]}
                            ),
                            "build (s)": round(built, 1),
                        }
                    )
            shutil.rmtree(store, ignore_errors=True)
            progress(json.dumps(results[-4:]))  # kept if a longer size is stopped
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--quick-in", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of earlier code")
    parser.add_argument(
        "--after", type=Path, default=ROOT, help="the code to compare (this checkout)"
    )
    parser.add_argument(
        "--before-up-to",
        type=int,
        default=10000,
        help="measure the earlier code up to this many commits (it re-embeds all)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="200 commits, once, this checkout only, in one process",
    )
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.code:  # a process of `in_process`: that code, not this checkout's
        sys.path.insert(0, str(args.code))
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return 0
    if args.build:
        build(Path(args.build[1]), int(args.build[0]))
        print("{}")
        return 0
    if args.quick_in:
        print(json.dumps(quick(int(args.quick_in[0]), Path(args.quick_in[1]))))
        return 0
    from benchmarks.harness.report import header, machine_info, write_report

    if args.quick:
        args.sizes, args.repeats, args.before = [200], 1, None
    results = run(
        args.sizes,
        args.repeats,
        args.before,
        args.before_up_to,
        args.after,
        one_process=args.quick,
    )
    command = "python benchmarks/forgetting/forgetting.py" + (
        " --quick" if args.quick else f" --sizes {' '.join(map(str, args.sizes))}"
    )
    if args.before:
        command += " --before <worktree of the earlier commit>"
    lines = header("Forgetting", command, machine_info(Path(tempfile.gettempdir())))
    lines += [
        "| commits | operation | code | median (s) | runs (s) | erased | secret in |",
        "|---:|---|---|---:|---|---:|---|",
    ]
    lines += [
        f"| {r['commits']:,} | {r['operation']} | {r['code']} | {r['median (s)']:.3f} "
        f"| {', '.join(map(str, r['runs (s)']))} | {r['versions erased']} "
        f"| {', '.join(r['files holding the secret']) or 'no file'} |"
        for r in results
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_report(args.out, text)
    if args.json:
        write_report(args.json, json.dumps(results, indent=2))
    leaked = [r for r in results if r["operation"] == "redact" and r["code"] == "after"]
    return 0 if all(not r["files holding the secret"] for r in leaked) else 1


if __name__ == "__main__":
    sys.exit(main())
