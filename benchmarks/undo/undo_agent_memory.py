"""Natural-language undo on memory laid out as LangMem writes it, asked as people ask.

The data set (`benchmarks/undo/agent_memory/`, written for this project): seventeen
users' memory histories in LangMem's layout (UUID keys, `{"content": ...}`,
memory-manager batches, updates over months, deletions, memories the assistant got
wrong, two poisoned memories per user except maya and tomas, one for teodora, lwazi,
jaesung and solveig), and requests written by people who saw only a plain account of
each life, never the memory text. Each user file names its split: amara, hana, maya,
tomas and walt are the tuning split; grace, kenji, oskar and priya the test split:
tune nothing on them; ines and dev, written after the resolver was settled, the
check split: run once, for the figures; bruno and ruth, written later still (one of
them in another memory style: "Bruno teaches bass ..." instead of "User ..."), the
fresh split, likewise; teodora and lwazi, the fresh2 split, written on 2026-12-01 by
two helpers (one wrote the histories, the other the requests from the accounts
alone) and run once on code `ad28f80` before anything changed for them; jaesung and
solveig, the fresh3 split, written the same way on 2026-12-02 in two more memory
styles (first person: "I drive ...", "[health] I take ..."; terse attribute lines:
"Meds: Concerta 36 mg, 07:00") and run once before anything changed for them.
`--battery a|b|c|d` reads a blind battery instead (issue 31: small and large
memories, profile records, near misses; `agent_memory/data.py`).

Every request is resolved with `store.resolve` (nothing applied) by each system,
side by side on the same store:

- R@1 / R@5: the right change among the first 1 / 5 candidates (for `undo` and
  `restore`, the gold item change; for `before`, `at` and `still`, the gold
  version);
- acting alone: how often `undo` would change memory without asking (the
  resolver decides, and the change is not a revert of items changed again
  since, which applies nothing and reports the conflict): coverage, over
  requests that name a change, and precision (an action on a request that
  should change nothing counts as wrong);
- items: how many items an action would change (its diff at HEAD), for right
  and wrong actions;
- none: requests that must change nothing, and how many the resolver would act on.

    python benchmarks/undo/undo_agent_memory.py                  # both splits
    python benchmarks/undo/undo_agent_memory.py --split tuning --systems default \\
        --resolver act_similarity=0.4                        # a tuning run
    python benchmarks/undo/undo_agent_memory.py --requests restated   # the agent path
    python benchmarks/undo/undo_agent_memory.py --postgres            # on PostgreSQL
    python benchmarks/undo/undo_agent_memory.py \\
        --out benchmarks/results/agent_memory.md \\
        --json benchmarks/results/agent_memory.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/undo/undo_agent_memory.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.harness.report import (
    PACKAGES,
    header,
    machine_info,
    markdown_table,
    reranker_description,
    write_report,
)
from benchmarks.harness.stores import Stores
from benchmarks.undo.agent_memory.data import (
    BATTERIES,
    DATA,
    LAYOUTS,
    Request,
    User,
    gold_of,
    ingest,
    load_requests,
    load_users,
)
from langgraph_chronomem import models
from langgraph_chronomem.search.intent import content_words, parse
from langgraph_chronomem.search.resolve import ResolverConfig

__all__ = ["SYSTEMS", "main", "run"]

SYSTEMS = {
    "bm25": ("BM25", ResolverConfig(retrievers=frozenset({"bm25"}), rerank_top=0)),
    "dense": ("Dense", ResolverConfig(retrievers=frozenset({"dense"}), rerank_top=0)),
    "rrf": ("RRF, equal weights", ResolverConfig(rrf_weights=(1.0, 1.0), rerank_top=0)),
    "default": ("The default", ResolverConfig()),
    "rerank": (
        "Default + stand-in rerank",
        ResolverConfig(reranker=models.PAIR_SCORER),
    ),
}
REQUEST_SETS = {"written": "requests", "restated": "restated"}
_SKIPPED = {  # a restated request left empty: the agent made no call
    "rank": None, "decided": False, "items": 0, "conflicts": 0, "best": None,
    "same_item": False,
    "scores": None, "second": None, "action": None, "reason": "not called",
    "candidates": None, "ms": 0.0,
}  # fmt: skip
SPLITS = (
    "test", "tuning", "check", "fresh", "fresh2", "fresh3", "a-tune", "a-test", "b",
    "c", "d-tune", "d-test", "e-test",
)  # fmt: skip


def _overlap(text: str, memory: str) -> float:
    """Share of the request's content words found in the target memory's text."""
    words = set(content_words(text))
    return len(words & set(content_words(memory))) / len(words) if words else 0.0


def _memory_text(user: User, ref: str | None) -> str:
    if ref is None:
        return ""
    _, write = user.writes()[ref]
    return write.content or " ".join((write.profile or {}).values())


def _right(candidate: Any, gold: Any, kind: str) -> bool:
    if kind in ("undo", "restore"):
        return any(
            (candidate.commit.version, c.key) == gold.change for c in candidate.changes
        )
    return bool(candidate.target == gold.target)


def run(
    users: Sequence[User],
    requests: Sequence[Request],
    systems: Sequence[str],
    overrides: dict[str, Any],
    directory: Path,
    stores: Stores | None = None,
    layout: str = "manage_memory",
) -> list[dict[str, Any]]:
    """Ingest every user into one store (values in LangMem's `layout`), resolve
    every request with every system."""
    stores = stores or Stores()
    path = directory / "store"
    with stores.open(path, scope_depth=2, build=True) as store:
        keys = {u.user: ingest(store, u, layout) for u in users}
        store.resolve(users[0].scope, "undo the update about the weather")  # catch-up
    by_user = {u.user: u for u in users}
    records: list[dict[str, Any]] = []
    for request in requests:
        user = by_user[request.user]
        gold = gold_of(request, keys[user.user], user)
        topic = parse(request.text, now=user.today).topic
        records.append(
            {
                "id": request.id,
                "user": user.user,
                "split": user.split,
                "kind": request.kind,
                "text": request.text,
                "parsed": parse(request.text, now=user.today).kind,
                "overlap": round(
                    _overlap(request.text, _memory_text(user, request.ref)), 3
                ),
                "topic_overlap": round(
                    _overlap(topic, _memory_text(user, request.ref)), 3
                ),
                "gold": None if gold.change is None else [*gold.change, gold.target],
                "style": request.style,
                "size": user.size,
                "near": request.near,
                "fields": sorted(gold.fields),
                "systems": {},
            }
        )
    for key in systems:
        config = replace(SYSTEMS[key][1], **_known(SYSTEMS[key][1], overrides))
        with stores.open(path, resolver=config) as store:
            store.resolve(
                users[0].scope, "undo the update about the weather"
            )  # warm-up
            for request, record in zip(requests, records, strict=True):
                user = by_user[request.user]
                gold = gold_of(request, keys[user.user], user)
                if not request.text:  # the agent would not have called the tool
                    record["systems"][key] = _SKIPPED
                    continue
                started = time.perf_counter()
                resolution = store.resolve(user.scope, request.text, now=user.today)
                ms = (time.perf_counter() - started) * 1000
                ranks = [
                    i
                    for i, c in enumerate(resolution.candidates)
                    if gold.change is not None and _right(c, gold, request.kind)
                ]
                best = resolution.best
                second = (
                    resolution.candidates[1] if len(resolution.candidates) > 1 else None
                )
                record["systems"][key] = {
                    "scores": None if best is None else asdict(best.scores),
                    "second": None if second is None else asdict(second.scores),
                    "action": None if best is None else best.action,
                    "rank": ranks[0] + 1 if ranks else None,
                    # acting alone: what `undo` would apply without asking (a
                    # revert of items changed again since applies nothing)
                    "decided": resolution.decided
                    and best is not None
                    and not best.conflicts,
                    "items": len(best.diff) if best is not None else 0,
                    "conflicts": len(best.conflicts) if best is not None else 0,
                    "best": None if best is None else best.id,
                    "same_item": second is not None
                    and best is not None
                    and bool(set(second.items) & set(best.items)),
                    "reason": resolution.reason,
                    "candidates": len(resolution.candidates),
                    "ms": round(ms, 1),
                }
    return records


def _known(config: ResolverConfig, overrides: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(config)} - {"retrievers"}
    if not config.rerank_top:
        names.discard("rerank_top")
    return {k: v for k, v in overrides.items() if k in names}


def summarize(records: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """One system's figures over `records`."""
    named = [r for r in records if r["gold"] is not None]
    empty = [r for r in records if r["gold"] is None]
    mine = [r["systems"][key] for r in named]
    acted = [s for s in mine if s["decided"]]
    right = [s for s in acted if s["rank"] == 1]
    wrong_none = [r["systems"][key] for r in empty if r["systems"][key]["decided"]]
    nothing = [r for r in empty if r["kind"] == "none"]
    actions = len(acted) + len(wrong_none)
    wrong_items = [s["items"] for s in acted if s["rank"] != 1] + [
        s["items"] for s in wrong_none
    ]
    return {
        "requests": len(named),
        "r1": sum(s["rank"] == 1 for s in mine) / max(1, len(mine)),
        "r5": sum(s["rank"] is not None and s["rank"] <= 5 for s in mine)
        / max(1, len(mine)),
        "coverage": len(acted) / max(1, len(mine)),
        "precision": len(right) / actions if actions else None,
        "items_median": statistics.median([s["items"] for s in acted])
        if acted
        else None,
        "wrong_items_median": statistics.median(wrong_items) if wrong_items else None,
        "none": len(nothing),
        "none_acted": sum(r["systems"][key]["decided"] for r in nothing),
        "ms_median": statistics.median(
            [r["systems"][key]["ms"] for r in records if r["systems"][key]["ms"]]
            or [0.0]
        ),
        **_blind(records, key),
    }


def _blind(records: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """The blind batteries' figures (issue 31): wrong actions on near misses,
    acting on plain requests, requests left with no candidate, R@1 by style."""
    near = [r for r in records if r["kind"] == "near_miss"]
    plain = [r for r in records if r["gold"] is not None and r["style"] == "plain"]
    plain_acted = [r for r in plain if r["systems"][key]["decided"]]
    asking = [r for r in records if r["kind"] != "none"]
    by_style = {}
    for style in ("plain", "indirect", "vague", "long"):
        these = [r for r in records if r["gold"] is not None and r["style"] == style]
        if these:
            by_style[style] = (
                len(these),
                sum(r["systems"][key]["rank"] == 1 for r in these) / len(these),
            )
    return {
        "near": len(near),
        "near_acted": sum(r["systems"][key]["decided"] for r in near),
        "near_acted_small": sum(
            r["systems"][key]["decided"] for r in near if r["size"] == "small"
        ),
        "near_small": sum(r["size"] == "small" for r in near),
        "plain": len(plain),
        "plain_coverage": len(plain_acted) / len(plain) if plain else None,
        "plain_precision": sum(r["systems"][key]["rank"] == 1 for r in plain_acted)
        / len(plain_acted)
        if plain_acted
        else None,
        "asking": len(asking),
        "no_candidates": sum(r["systems"][key]["candidates"] == 0 for r in asking),
        "by_style": by_style,
    }


def _blind_row(s: dict[str, Any], name: str) -> list[str]:
    styles = s["by_style"]
    return [
        name,
        f"{s['near_acted']} / {s['near']} "
        f"({s['near_acted_small']} / {s['near_small']})",
        f"{_pct(s['plain_coverage'])} of {s['plain']}",
        _pct(s["plain_precision"]),
        f"{s['no_candidates']} / {s['asking']}",
        *(
            f"{styles[st][1]:.2f} ({styles[st][0]})" if st in styles else "-"
            for st in ("plain", "indirect", "vague", "long")
        ),
    ]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render(
    records: Sequence[dict[str, Any]],
    systems: Sequence[str],
    command: str,
    machine: dict[str, str],
    overrides: dict[str, Any],
) -> tuple[str, dict[str, Any]]:
    lines = header(
        "Undo on agent memory (LangMem layout, people's phrasing)", command, machine
    )
    summary: dict[str, Any] = {}
    for split in SPLITS:
        part = [r for r in records if r["split"] == split]
        if not part:
            continue
        named = [r for r in part if r["gold"] is not None]
        users = sorted({r["user"] for r in part})
        overlap = statistics.mean(r["overlap"] for r in named) if named else 0.0
        disjoint = sum(r["overlap"] == 0 for r in named) / max(1, len(named))
        none_share = sum(r["gold"] is None for r in part) / len(part)
        lines += [
            "",
            f"## {split.capitalize()} split: {', '.join(users)}",
            "",
            f"{len(part)} requests, {len(named)} naming a change, "
            f"{len(part) - len(named)} ({none_share:.0%}) that must change nothing. "
            f"Mean word overlap with the target memory: {overlap:.2f} "
            f"(no shared word: {disjoint:.0%}).",
            "",
        ]
        rows = []
        summary[split] = {}
        for key in systems:
            s = summarize(part, key)
            summary[split][key] = s
            rows.append(
                [
                    SYSTEMS[key][0],
                    str(s["requests"]),
                    _pct(s["r1"]),
                    _pct(s["r5"]),
                    _pct(s["precision"]),
                    _pct(s["coverage"]),
                    "-" if s["items_median"] is None else f"{s['items_median']:g}",
                    "-"
                    if s["wrong_items_median"] is None
                    else f"{s['wrong_items_median']:g}",
                    f"{s['none_acted']} / {s['none']}",
                    f"{s['ms_median']:.0f}",
                ]
            )
        lines += markdown_table(
            [
                "system",
                "requests",
                "R@1",
                "R@5",
                "acts: precision",
                "acts: coverage",
                "items per action",
                "items per wrong action",
                "none acted on",
                "median ms",
            ],
            rows,
        )
        if any(r["kind"] == "near_miss" for r in part):
            lines += ["", "Near misses, plain requests, candidates, R@1 by style:", ""]
            lines += markdown_table(
                [
                    "system",
                    "near misses acted on (small memory)",
                    "plain: acts",
                    "plain: precision",
                    "asked, no candidate",
                    *(
                        f"R@1 {style}"
                        for style in ("plain", "indirect", "vague", "long")
                    ),
                ],
                [_blind_row(summary[split][key], SYSTEMS[key][0]) for key in systems],
            )
        per_kind = Counter(r["kind"] for r in part)
        kinds = []
        for kind in ("undo", "restore", "before", "at", "still"):
            these = [r for r in part if r["kind"] == kind]
            if not these:
                continue
            cells = [kind, str(per_kind[kind])]
            for key in systems:
                cells.append(
                    _pct(
                        sum(r["systems"][key]["rank"] == 1 for r in these) / len(these)
                    )
                )
            cells.append(_pct(sum(r["parsed"] == kind for r in these) / len(these)))
            kinds.append(cells)
        lines += [
            "",
            "R@1 by what the request asks for, and how often the parser read it:",
            "",
        ]
        lines += markdown_table(
            ["kind", "requests", *(SYSTEMS[k][0] for k in systems), "intent read"],
            kinds,
        )
    if overrides:
        lines += ["", f"Resolver overrides: {overrides}"]
    lines += ["", "Systems:", ""]
    for key in systems:
        config = replace(SYSTEMS[key][1], **_known(SYSTEMS[key][1], overrides))
        lines.append(f"- {SYSTEMS[key][0]}: rerank {reranker_description(config)}")
    return "\n".join(lines) + "\n", summary


def _override(item: str) -> tuple[str, Any]:
    name, _, text = item.partition("=")
    try:
        return name, json.loads(text)
    except json.JSONDecodeError:
        return name, text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("all", *SPLITS), default="all")
    parser.add_argument(
        "--battery", choices=tuple(BATTERIES),
        help="a blind battery (issue 31) instead of the agent-memory data set",
    )  # fmt: skip
    parser.add_argument("--systems", nargs="+", choices=tuple(SYSTEMS))
    parser.add_argument(
        "--requests", choices=tuple(REQUEST_SETS), default="written",
        help="the requests as people wrote them, or as an agent restated them",
    )  # fmt: skip
    parser.add_argument(
        "--layout", choices=LAYOUTS, default="manage_memory",
        help="values as LangMem's manage_memory tool writes them, or wrapped as "
        "its background memory manager (create_memory_store_manager) does",
    )  # fmt: skip
    parser.add_argument("--resolver", nargs="+", default=[], metavar="FIELD=VALUE")
    parser.add_argument(
        "--quick", action="store_true",
        help="two users (a battery's first small user), default only",
    )  # fmt: skip
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--postgres", nargs="?", const="", metavar="DSN",
        help="the store on PostgreSQL: a new database on the server DSN names, "
        "or with no DSN on a private server started for the run",
    )  # fmt: skip
    args = parser.parse_args(argv)
    systems = args.systems or (("default",) if args.quick else tuple(SYSTEMS))
    root = BATTERIES[args.battery] if args.battery else DATA
    names: tuple[str, ...] | None = None
    if args.quick and args.battery:  # its first small user
        names = (next(u.user for u in load_users(root) if u.size == "small"),)
    elif args.quick:
        names = ("maya", "oskar")
    elif args.split != "all":
        names = tuple(u.user for u in load_users(root) if u.split == args.split)
    users = load_users(root, names)
    requests = load_requests(root / REQUEST_SETS[args.requests], users)
    overrides = dict(_override(i) for i in args.resolver)
    with tempfile.TemporaryDirectory() as tmp, Stores(args.postgres) as stores:
        machine = machine_info(Path(tmp), (*PACKAGES, "chromadb", "FlashRank"))
        machine["engine"] = stores.engine
        records = run(
            users, requests, systems, overrides, Path(tmp), stores, args.layout
        )
    command = shlex.join(
        ["python", "benchmarks/undo/undo_agent_memory.py", *(argv or sys.argv[1:])]
    )
    markdown, summary = render(records, systems, command, machine, overrides)
    print(markdown)
    if args.out:
        write_report(args.out, markdown)
    if args.json:
        write_report(
            args.json, json.dumps({"summary": summary, "requests": records}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
