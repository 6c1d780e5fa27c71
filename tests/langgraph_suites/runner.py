"""Fetch LangGraph's test suites for the installed versions and run them on chronomem.

LangGraph publishes its store and saver tests in the source distributions of
`langgraph-checkpoint-sqlite` and `langgraph-checkpoint-postgres`. This module
downloads the sdists of the versions installed here (with pip, once: they are
cached under `~/.cache/langgraph-chronomem/langgraph-suites/`), extracts their
`tests/`, runs them under pytest with our plugin (`_chronomem_suites.py`, which
swaps in `ChronoStore` and `ChronoCheckpointer`), and compares every test's
outcome with `expected.EXPECTED_FAILURES`.

    python -m tests.langgraph_suites          # every suite; exit 1 on a surprise
    python -m tests.langgraph_suites sqlite   # one distribution

Nothing of LangGraph's code is kept in this repository: only the list of
exceptions, by test id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from tests.langgraph_suites.expected import EXPECTED_FAILURES, Expected

CACHE = Path.home() / ".cache" / "langgraph-chronomem" / "langgraph-suites"
PLUGIN_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Suite:
    """One distribution's test files, run in one pytest process."""

    name: str  # the prefix of its test ids in `expected.py`
    distribution: str
    files: tuple[str, ...]

    @property
    def version(self) -> str:
        return version(self.distribution)


SUITES = (
    Suite(
        "sqlite",
        "langgraph-checkpoint-sqlite",
        (
            "tests/test_store.py",
            "tests/test_async_store.py",
            "tests/test_ttl.py",
            "tests/test_sqlite.py",
            "tests/test_aiosqlite.py",
        ),
    ),
    Suite(
        "postgres",
        "langgraph-checkpoint-postgres",
        (
            "tests/test_store.py",
            "tests/test_async_store.py",
            "tests/test_sync.py",
            "tests/test_async.py",
        ),
    ),
)


class DownloadError(RuntimeError):
    """LangGraph's sdist could not be fetched from PyPI."""


def sources(suite: Suite, cache: Path = CACHE) -> Path:
    """The extracted `tests/` of `suite`'s installed version (downloaded once).

    Raises:
        DownloadError: If pip cannot download the sdist (no route to PyPI).
    """
    name = suite.distribution.replace("-", "_")
    root = cache / f"{name}-{suite.version}"
    if (root / "tests").is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as download:
        spec = f"{suite.distribution}=={suite.version}"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "--dest", download, spec],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        archives = list(Path(download).glob("*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise DownloadError(
                f"could not download the sdist of {spec} from PyPI, which holds "
                f"LangGraph's test suites:\n{done.stderr.strip()}"
            )
        staging = Path(tempfile.mkdtemp(dir=cache))
        with tarfile.open(archives[0]) as archive:
            top = archive.getnames()[0].split("/")[0]
            wanted = [
                member
                for member in archive.getmembers()
                if member.name.startswith(f"{top}/tests/")
                or member.name == f"{top}/pyproject.toml"
            ]
            archive.extractall(staging, members=wanted, filter="data")
        (staging / top).rename(root)
        staging.rmdir()
    return root


@dataclass
class Outcome:
    """What one test did: `passed`, `failed` or `skipped`, and why it failed."""

    test_id: str
    outcome: str
    message: str = ""


@dataclass
class Comparison:
    """A suite's outcomes held against the exceptions list."""

    suite: Suite
    outcomes: list[Outcome]
    seconds: float
    unexpected: list[Outcome] = field(default_factory=list)  # not listed: failed,
    # or skipped (a skip would hide what it no longer checks)
    stale: list[str] = field(default_factory=list)  # listed, passed or missing
    exit_code: int = 0  # pytest's: 0 or 1 when the whole session ran
    output: str = ""  # pytest's, when it reported no test or did not finish

    @property
    def ok(self) -> bool:
        return (
            bool(self.outcomes)
            and self.exit_code in (0, 1)
            and not self.unexpected
            and not self.stale
        )


def run(suite: Suite, *, select: str | None = None) -> Comparison:
    """Run `suite` against chronomem and compare it with the exceptions list."""
    root = sources(suite)
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "outcomes.jsonl"
        env = {
            **os.environ,
            # The plugin by its own name: `tests` there is LangGraph's package.
            "PYTHONPATH": os.pathsep.join(
                [str(PLUGIN_DIR), os.environ.get("PYTHONPATH", "")]
            ),
            "CHRONOMEM_SUITES_REPORT": str(report),
            "CHRONOMEM_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
        }
        command = [
            sys.executable, "-m", "pytest", "-p", "_chronomem_suites",
            "-p", "no:cacheprovider", "-o", "addopts=", "-o", "asyncio_mode=auto",
            "-q", "--no-header", "-rN", "--tb=no", *suite.files,
        ]  # fmt: skip
        if select:
            command += ["-k", select]
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=root, env=env, check=False, capture_output=True, text=True
        )
        seconds = time.monotonic() - started
        lines = report.read_text().splitlines() if report.exists() else []
    outcomes = [Outcome(**json.loads(line)) for line in lines]
    comparison = compare(suite, outcomes, seconds, partial=select is not None)
    comparison.exit_code = done.returncode
    if not comparison.ok:
        comparison.output = done.stdout[-4000:] + done.stderr[-4000:]
    return comparison


def compare(
    suite: Suite, outcomes: list[Outcome], seconds: float, *, partial: bool = False
) -> Comparison:
    """Hold `outcomes` against `EXPECTED_FAILURES`: a failure must be listed,
    with its message, and every listed test of this suite must have run and
    not passed."""
    comparison = Comparison(suite, outcomes, seconds)
    prefix = f"{suite.name}:"
    for outcome in outcomes:
        if outcome.outcome == "skipped":
            comparison.unexpected.append(outcome)
        if outcome.outcome != "failed":
            continue
        expected = expected_for(suite, outcome.test_id)
        if expected is None or expected.failure not in outcome.message:
            comparison.unexpected.append(outcome)
    for key in EXPECTED_FAILURES:
        if not key.startswith(prefix):
            continue
        matched = [o for o in outcomes if _matches(key[len(prefix) :], o.test_id)]
        if partial and not matched:
            continue
        if not matched or any(o.outcome != "failed" for o in matched):
            comparison.stale.append(key)
    return comparison


def expected_for(suite: Suite, test_id: str) -> Expected | None:
    """The listed exception covering `test_id`, if any."""
    for key, expected in EXPECTED_FAILURES.items():
        name, _, listed = key.partition(":")
        if name == suite.name and _matches(listed, test_id):
            return expected
    return None


def _matches(listed: str, test_id: str) -> bool:
    """A listed id names one test, or, without `[...]`, all its parametrizations."""
    return test_id == listed or ("[" not in listed and test_id.startswith(listed + "["))


def table(comparisons: list[Comparison]) -> str:
    """Per suite and file: passed, expected failures, unexpected outcomes
    (failures not listed, and skips)."""
    columns = ("passed", "expected", "unexpected")
    lines = [f"{'suite':<40}" + "".join(f"{c:>11}" for c in columns)]
    for comparison in comparisons:
        suite = comparison.suite
        per_file: dict[str, Counter[str]] = {}
        for outcome in comparison.outcomes:
            counts = per_file.setdefault(outcome.test_id.split("::")[0], Counter())
            if outcome.outcome == "failed":
                surprise = outcome in comparison.unexpected
                counts["unexpected" if surprise else "expected"] += 1
            elif outcome in comparison.unexpected:
                counts["unexpected"] += 1
            else:
                counts[outcome.outcome] += 1
        for path, counts in per_file.items():
            label = f"{suite.name} {suite.version} {path.removeprefix('tests/')}"
            lines.append(f"{label:<40}" + "".join(f"{counts[c]:>11}" for c in columns))
        lines.append(f"  ({suite.name}: {comparison.seconds:.0f} s)")
    for comparison in comparisons:
        name = comparison.suite.name
        if not comparison.outcomes:
            lines.append(f"NO TEST RAN in {name}; pytest said:\n{comparison.output}")
        elif comparison.exit_code not in (0, 1):
            lines.append(
                f"PYTEST STOPPED in {name} (exit {comparison.exit_code}); it said:\n"
                f"{comparison.output}"
            )
        for outcome in comparison.unexpected:
            listed = expected_for(comparison.suite, outcome.test_id) is not None
            why = " (listed, but fails for another reason)" if listed else ""
            why = " (skipped)" if outcome.outcome == "skipped" else why
            lines.append(f"UNEXPECTED {name}:{outcome.test_id}{why}: {outcome.message}")
        for key in comparison.stale:
            lines.append(f"LISTED BUT NOT FAILING {key} (remove it from expected.py)")
    return "\n".join(lines)
