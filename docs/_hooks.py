"""MkDocs hook: links from docs/ to other files of the repository.

A page may link to `../examples/server_graph.py` or `../benchmarks/README.md`, which
works when the Markdown is read on GitHub. In the built site those files do not
exist, so this hook points such links at the file in the repository (`repo_url`).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

_LINK = re.compile(r"(\]\()(\.\./[^)\s#]+)(#[^)\s]*)?(\))")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Rewrite links that leave docs/ into links to the repository's files."""
    repo = (config.get("repo_url") or "").rstrip("/")
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    page_dir = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match[str]) -> str:
        target = posixpath.normpath(posixpath.join("docs", page_dir, match[2]))
        if target.startswith("docs/") or target.startswith(".."):
            return match[0]  # inside docs/ (MkDocs checks it) or outside the repo
        if not (root / target).exists():
            return match[0]  # left for MkDocs to report as broken
        kind = "tree" if (root / target).is_dir() else "blob"
        url = f"{repo}/{kind}/main/{target}{match[3] or ''}"
        return f"{match[1]}{url}{match[4]}"

    return _LINK.sub(rewrite, markdown)
