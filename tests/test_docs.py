"""The documentation cannot rot: the site builds, the API reference is complete, and
the examples run and print what the pages say they print.

- `mkdocs build --strict` runs in this process, so the network guard of
  `conftest.py` applies: a build that fetched anything (fonts, inventories) fails.
- Every name in `langgraph_chronomem.__all__` must be rendered in the API reference.
- Every ```python block of the pages below and of the README runs, page by page,
  in a fresh working directory (blocks of one page share their variables, like a
  notebook). A block followed by a ```text title="Output" block must print exactly
  that. A block that prints and shows no output fails too. A block that cannot run
  here (it needs an LLM or a server) says so on the line before it:
  `<!-- not run: why -->`.

After changing an example, rewrite its output from a real run:

    python tests/test_docs.py --update docs/quickstart.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"  # its quickstart is what a newcomer pastes first
INSTALL_HINT = "the docs need MkDocs: pip install -e '.[docs]'"
OUTPUT_INFO = 'text title="Output"'
SKIP = re.compile(r"<!-- not run: (.+?) -->")
# Pages written by others that the runner leaves to their owners' tests: cli.md's
# outputs are terminal sessions, checked by tests/test_cli.py; the benchmark pages'
# commands are the harnesses' own (tests/test_benchmarks*.py).
NOT_RUN_PAGES = {"cli.md", "benchmarks.md"}
NOT_RUN_DIRS = {"benchmarks"}

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's banner, not a warning


# -- the site ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with `mkdocs build --strict` (any warning fails it)."""
    try:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort
    except ImportError as exc:  # not a skip: the docs are part of the project
        pytest.fail(f"{INSTALL_HINT} ({exc})")
    out = tmp_path_factory.mktemp("site")
    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    cwd = Path.cwd()
    try:
        os.chdir(ROOT)
        config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True)
        build(config)
    except Abort as exc:
        pytest.fail(f"mkdocs build --strict failed: {exc}\n" + "\n".join(warnings))
    finally:
        os.chdir(cwd)
        logger.removeHandler(handler)
    assert not warnings, "\n".join(warnings)
    return out


def test_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "quickstart" / "index.html").is_file()


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    import langgraph_chronomem

    rendered = "".join(
        page.read_text() for page in (site / "reference").rglob("index.html")
    )
    missing = [
        name
        for name in langgraph_chronomem.__all__
        if f'id="langgraph_chronomem.{name}"' not in rendered
    ]
    assert not missing, f"add to docs/reference/: {missing}"


def test_every_error_is_exported_from_the_package() -> None:
    """`from langgraph_chronomem import WriteConflictError` works for each error."""
    import langgraph_chronomem
    from langgraph_chronomem import errors

    assert set(errors.__all__) <= set(langgraph_chronomem.__all__)


def _module_tree(design: str) -> set[str]:
    """The paths docs/design.md's module tree names: `engine/`, `engine/sql.py`...

    One entry a line, two spaces of indent a level, its description after it;
    a description's own lines start further right and name no `.py` first.
    """
    block = design.split("\nlanggraph_chronomem/\n", 1)[1].split("```", 1)[0]
    paths: set[str] = set()
    parents: list[str] = []
    for line in block.splitlines():
        entry = re.match(r"( *)(\w+(?:\.py|/))(?:\s|$)", line)
        if entry is None:
            continue
        depth = len(entry[1]) // 2 - 1
        parents[depth:] = [entry[2]]
        paths.add("".join(parents))
    return paths


def test_the_design_page_names_every_module() -> None:
    """docs/design.md's tree is the package as it is: a module added, moved or
    removed without its line there fails here. A directory named without
    children (`cli/`) stands for all its modules."""
    package = ROOT / "langgraph_chronomem"
    named = _module_tree((DOCS / "design.md").read_text())
    modules = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if path.name != "__init__.py"
    }
    whole = {
        d
        for d in named
        if d.endswith("/") and not any(n != d and n.startswith(d) for n in named)
    }
    unlisted = {m for m in modules if m not in named and not m.startswith(tuple(whole))}
    gone = {n for n in named if not n.endswith("/") and n not in modules}
    assert not unlisted, f"add to docs/design.md's tree: {sorted(unlisted)}"
    assert not gone, f"docs/design.md names modules that do not exist: {sorted(gone)}"


def test_the_site_fetches_nothing_from_the_web(site: Path) -> None:
    """No web fonts or scripts from a CDN: the site works air-gapped."""
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert "fonts.googleapis.com" not in html, page
        assert not re.search(r'<script[^>]+src="https?://', html), page


def test_the_plots_are_on_a_page(site: Path) -> None:
    page = (site / "benchmark-plots" / "index.html").read_text()
    for image in sorted((DOCS / "img").glob("*.png")):
        assert image.name in page, f"{image.name} is on no page"


# -- the examples -----------------------------------------------------------------


@dataclass
class Block:
    """A fenced block of a page: its info string, text and position."""

    info: str
    text: str
    start: int  # line index of the opening fence
    end: int  # line index of the closing fence
    skip: str | None = None  # why it does not run, if it does not
    output: Block | None = None  # the ```text title="Output" block after it


def blocks(page: Path) -> list[Block]:
    """The top-level fenced blocks of a Markdown page, outputs tied to their code."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = re.match(r"^(`{3,})(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        fence, info = opening[1], opening[2].strip()
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        skip = SKIP.fullmatch(before.strip())
        block = Block(info, "\n".join(lines[i + 1 : end]), i, end, skip and skip[1])
        previous = found[-1] if found else None
        gap = lines[previous.end + 1 : i] if previous else []
        if (
            info == OUTPUT_INFO
            and previous is not None
            and previous.info.startswith("python")
            and not any(line.strip() for line in gap)
        ):
            previous.output = block
        found.append(block)
        i = end + 1
    return found


def code_blocks(page: Path) -> list[Block]:
    return [b for b in blocks(page) if re.match(r"(python|py)\b", b.info)]


def pages_with_code() -> list[Path]:
    pages = sorted(
        page
        for page in DOCS.rglob("*.md")
        if page.name not in NOT_RUN_PAGES
        and page.parent.name not in NOT_RUN_DIRS
        and code_blocks(page)
    )
    return [README, *pages]


def _page_id(page: Path) -> str:
    return str(page.relative_to(DOCS if page.is_relative_to(DOCS) else ROOT))


@contextlib.contextmanager
def working_dir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_page(page: Path, workdir: Path) -> list[tuple[Block, str]]:
    """Run the page's code blocks in order; return each with what it printed."""
    module = types.ModuleType("__docs__")  # typing and dataclasses look it up
    namespace = module.__dict__
    printed = []
    with working_dir(workdir):
        sys.modules["__docs__"] = module
        try:
            for block in code_blocks(page):
                if block.skip:
                    continue
                stdout = io.StringIO()
                where = f"{page.relative_to(ROOT)}:{block.start + 1}"
                with contextlib.redirect_stdout(stdout):
                    exec(compile(block.text, where, "exec"), namespace)
                printed.append((block, stdout.getvalue()))
        finally:
            del sys.modules["__docs__"]
            for value in namespace.values():  # stores the page left open
                close = getattr(value, "close", None)
                if type(value).__name__ == "ChronoStore" and callable(close):
                    close()
            _forget_chroma_clients()
    return printed


def _forget_chroma_clients() -> None:
    """Drop Chroma's process-wide clients, which it keys by the path as given.

    Every page opens "./memory" in a working directory of its own, and Chroma
    would hand the next page the client of the previous page's directory.
    (`ChronoStore.from_path` passes Chroma the path unresolved.)
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def _tidy(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


@pytest.mark.parametrize("page", pages_with_code(), ids=_page_id)
def test_examples_run_and_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    for block, out in run_page(page, tmp_path):
        where = f"{page.relative_to(ROOT)}:{block.start + 1}"
        if block.output is None:
            assert not out.strip(), f"{where} prints, but the page shows no output"
            continue
        assert _tidy(out) == _tidy(block.output.text), (
            f"{where} printed something else than the page shows; if the change is "
            f"right, run: python tests/test_docs.py --update {page.relative_to(ROOT)}"
        )


def test_the_quickstart_runs() -> None:
    """The page this file exists for: it must have examples and outputs."""
    quickstart = code_blocks(DOCS / "quickstart.md")
    assert quickstart and all(b.skip is None for b in quickstart)
    assert sum(b.output is not None for b in quickstart) >= 3


def test_the_readme_quickstart_runs_as_printed() -> None:
    """What a newcomer pastes first runs whole (the test above runs it), and
    shows what it prints."""
    readme = code_blocks(README)
    assert readme and all(b.skip is None and b.output is not None for b in readme)


def test_skipped_blocks_say_why() -> None:
    for page in pages_with_code():
        for block in code_blocks(page):
            assert block.skip is None or len(block.skip) > 5, page


# -- rewriting outputs --------------------------------------------------------------


def update(page: Path) -> None:
    """Rewrite (or add) the Output block after each code block that prints."""
    with tempfile.TemporaryDirectory(prefix="docs-examples-") as tmp:
        printed = run_page(page, Path(tmp))
    lines = page.read_text().splitlines()
    for block, out in reversed(printed):  # bottom up: line numbers stay valid
        text = _tidy(out)
        if block.output is not None:
            if text:
                lines[block.output.start + 1 : block.output.end] = text.splitlines()
            else:
                del lines[block.end + 1 : block.output.end + 1]
        elif text:
            lines[block.end + 1 : block.end + 1] = [
                "",
                f"```{OUTPUT_INFO}",
                *text.splitlines(),
                "```",
            ]
    page.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="rewrite the docs' example outputs")
    parser.add_argument("--update", nargs="+", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("CHRONOMEM_OFFLINE", "1")  # as conftest.py sets it
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    logging.basicConfig(level=logging.ERROR)
    for path in args.update:
        update(path.resolve())
        print(f"updated {path}", file=sys.stderr)
