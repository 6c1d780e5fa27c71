"""The LoCoMo rollback report: tables per split, slice and conversation.

Every table is computed from the per-request records, so a saved run
(`--json`) renders again without resolving anything (`--from-json`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.harness.report import header, markdown_table
from benchmarks.undo.locomo.data import TUNING
from benchmarks.undo.locomo.metrics import (
    aggregate,
    latest_baseline,
    random_baseline,
    score,
)
from benchmarks.undo.locomo.queries import TEMPLATES

__all__ = ["BASELINES", "metric_fn", "render"]

BASELINES = ("random", "latest")


def metric_fn(name: str) -> Callable[[Mapping[str, Any]], dict[str, float]]:
    """The metrics of one record for a system key or a baseline."""

    def of(record: Mapping[str, Any]) -> dict[str, float]:
        gold, evidence, head = record["gold"], record["evidence"], record["head"]
        if name == "random":
            return random_baseline(gold, evidence, head)
        if name == "latest":
            return latest_baseline(gold, evidence, head, record["intent"])
        out = record["systems"][name]
        ok = reads_as(record["parsed"]) == record["intent"]
        return score(gold, evidence, out["targets"], out["matched"], ok)

    return of


def _ran(records: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    """The records `name` resolved (a baseline "resolves" every one)."""
    if name in BASELINES:
        return list(records)
    return [r for r in records if name in r["systems"]]


def _pct(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.2f}"


def _with_ci(result: Mapping[str, Any], metric: str) -> str:
    ci = result.get(f"{metric}_ci")
    text = _pct(result.get(metric))
    return f"{text} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else text


def _headline(
    records: Sequence[Mapping[str, Any]], labels: Mapping[str, str], bootstrap: int
) -> tuple[list[str], dict[str, Any]]:
    rows, results = [], {}
    for name in labels:
        mine = _ran(records, name)
        result = aggregate(mine, metric_fn(name), bootstrap=bootstrap)
        results[name] = result
        decided = precise = ms = "-"
        if name not in BASELINES and mine:
            outs = [r["systems"][name] for r in mine]
            acted = [r for r in mine if r["systems"][name]["decided"]]
            decided = _pct(len(acted) / len(mine))
            if acted:
                precise = _pct(statistics.mean(metric_fn(name)(r)["r1"] for r in acted))
            ms = f"{statistics.median(o['ms'] for o in outs):.0f}"
        rows.append(
            [
                labels[name],
                result["n"],
                _with_ci(result, "r1"),
                _with_ci(result, "r5"),
                _with_ci(result, "scope2"),
                _pct(result.get("anchor1")),
                _pct(result.get("r1_macro")),
                decided,
                precise,
                ms,
            ]
        )
    header = [
        "system", "requests", "R@1 [95% CI]", "R@5 [95% CI]", "Scope@2 [95% CI]",
        "Anchor@1", "R@1 per-conv mean", "decided", "R@1 if decided", "median ms",
    ]  # fmt: skip
    return markdown_table(header, rows), results


def _slices(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    def where(test: Callable[[Mapping[str, Any]], bool]) -> list[Mapping[str, Any]]:
        return [r for r in records if test(r)]

    return {
        "QA, undo X": where(lambda r: r["source"] == "qa" and r["intent"] == "undo"),
        "QA, go back to when X": where(
            lambda r: r["source"] == "qa" and r["intent"] == "at"
        ),
        "event, undo X": where(
            lambda r: r["source"] == "event" and r["intent"] == "undo"
        ),
        "event, go back to when X": where(
            lambda r: r["source"] == "event" and r["intent"] == "at"
        ),
        "QA single-hop (cat. 4)": where(lambda r: r["kind"] == "single-hop"),
        "QA temporal (cat. 2)": where(lambda r: r["kind"] == "temporal"),
        "QA multi-hop (cat. 1)": where(lambda r: r["kind"] == "multi-hop"),
        "event, names its session date": where(
            lambda r: r["source"] == "event" and r["template"].endswith("-date")
        ),
        "event, other date words": where(
            lambda r: r["source"] == "event" and not r["template"].endswith("-date")
        ),
        "overlap 0": where(lambda r: r["overlap"] == 0),
        "overlap (0, 0.5)": where(lambda r: 0 < r["overlap"] < 0.5),
        "overlap >= 0.5": where(lambda r: r["overlap"] >= 0.5),
    }


def _breakdown(
    records: Sequence[Mapping[str, Any]], labels: Mapping[str, str]
) -> list[str]:
    rows = []
    for label, subset in _slices(records).items():
        if not subset:
            continue
        cells = []
        for name in labels:
            m = aggregate(_ran(subset, name), metric_fn(name), bootstrap=0)
            cells.append(
                " / ".join(_pct(m.get(k)) for k in ("r1", "r5", "scope2", "anchor1"))
            )
        rows.append([label, len(subset), *cells])
    return markdown_table(["slice", "requests", *labels.values()], rows)


def _per_conv(
    records: Sequence[Mapping[str, Any]], labels: Mapping[str, str]
) -> list[str]:
    convs = sorted({r["conv"] for r in records})
    rows = []
    for name, label in labels.items():
        cells = []
        for conv in convs:
            m = aggregate(
                [r for r in _ran(records, name) if r["conv"] == conv],
                metric_fn(name),
                bootstrap=0,
            )
            cells.append(f"{_pct(m.get('r1'))} / {_pct(m.get('r5'))}")
        rows.append([label, *cells])
    return markdown_table(["R@1 / R@5", *convs], rows)


def reads_as(kind: str) -> str:
    """The template intent a parsed kind serves: "go back to before X" (`before`)
    targets the version before X, as an undo of X does."""
    return "undo" if kind == "before" else kind


def _intents(records: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for template, (intent, text) in TEMPLATES.items():
        subset = [r for r in records if r["template"] == template]
        if not subset:
            continue
        right = sum(reads_as(r["parsed"]) == intent for r in subset)
        wrong = sorted({r["parsed"] for r in subset if reads_as(r["parsed"]) != intent})
        overlap = statistics.mean(r["overlap"] for r in subset)
        rows.append(
            [
                f"`{text}`",
                intent,
                len(subset),
                _pct(right / len(subset)),
                ", ".join(wrong) or "-",
                _pct(overlap),
            ]
        )
    header = ["template", "intent", "requests", "parsed right", "misread as",
              "word overlap"]  # fmt: skip
    return markdown_table(header, rows)


def _data_table(
    records: Sequence[Mapping[str, Any]], used: Mapping[str, Any]
) -> list[str]:
    rows = []
    for conv, facts in used.items():
        mine = [r for r in records if r["conv"] == conv]
        anchors = facts["anchors"]
        dropped = facts["dropped"]
        rows.append(
            [
                conv,
                "tuning" if conv in TUNING else "test",
                facts["turns"],
                facts["sessions"],
                " / ".join(
                    str(anchors.get(k, 0))
                    for k in ("single-hop", "temporal", "multi-hop", "event")
                ),
                f"{sum(not r['date'] for r in mine)} / {sum(r['date'] for r in mine)}",
                _pct(statistics.mean(r["overlap"] for r in mine)) if mine else "-",
                dropped.get("qa with evidence in several sessions", 0),
                dropped.get("qa category 3", 0) + dropped.get("qa category 5", 0),
                dropped.get("evidence ids naming no turn", 0),
                dropped.get("evidence ids repaired", 0),
            ]
        )
    header = [
        "conversation", "split", "turns (commits)", "sessions",
        "anchors: single-hop / temporal / multi-hop / event", "requests: main / date",
        "word overlap", "QA dropped: evidence in several sessions",
        "QA dropped: category 3 or 5", "evidence ids dropped", "evidence ids repaired",
    ]  # fmt: skip
    return ["### Data", "", *markdown_table(header, rows), ""]


def render(
    records: Sequence[Mapping[str, Any]],
    *,
    systems: Mapping[str, str],
    bootstrap: int,
    rerank_every: int,
    machine: Mapping[str, str],
    command: str,
    models_used: Mapping[str, str],
    notes: Sequence[str] = (),
    used: Mapping[str, Any] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The markdown report and the aggregates, per split and slice.

    Args:
        records: Per-request records (`rollback_locomo.run`).
        systems: Label of each system key that ran, in column order.
        bootstrap: Resamples for the intervals.
        rerank_every: The rerank system resolved every n-th request only.
        machine: From `benchmarks.harness.report.machine_info`.
        command: The command line.
        models_used: The exact models and knobs of each system.
        notes: Paragraphs printed before the tables.
        used: Per conversation, what was used of it (the data table).
    """
    labels = {**systems, **{b: f"{b} (baseline)" for b in BASELINES}}
    lines = [
        *header("Rollback on LoCoMo", command, machine),
        "Systems and the exact models:",
        "",
        *(f"- {k}: {v}" for k, v in models_used.items()),
        "",
        *(line for note in notes for line in (note, "")),
        *(_data_table(records, used) if used else []),
    ]
    summary: dict[str, Any] = {}
    for split in ("test", "tuning"):
        in_split = [r for r in records if r["split"] == split]
        if not in_split:
            continue
        convs = sorted({r["conv"] for r in in_split})
        titles = {False: "requests naming no date", True: "date slice (names a date)"}
        for date, title in titles.items():
            subset = [r for r in in_split if r["date"] == date]
            if not subset:
                continue
            table, results = _headline(subset, labels, bootstrap)
            summary[f"{split}/{'date' if date else 'main'}"] = results
            lines += [
                f"### {split.capitalize()} split ({', '.join(convs)}), {title}",
                "",
                *table,
                "",
            ]
            paired = [r for r in subset if "rerank" in r["systems"]]
            if rerank_every > 1 and paired:
                table, results = _headline(paired, labels, bootstrap)
                summary[f"{split}/{'date' if date else 'main'}/paired"] = results
                lines += [
                    f"Every system on the {len(paired)} requests the rerank "
                    f"resolved (1 in {rerank_every}):",
                    "",
                    *table,
                    "",
                ]
            lines += [
                "R@1 / R@5 / Scope@2 / Anchor@1 by slice:",
                "",
                *_breakdown(subset, labels),
                "",
            ]
            if not date:
                lines += [
                    "Per conversation:",
                    "",
                    *_per_conv(subset, labels),
                    "",
                ]
    lines += [
        "### Intent parsing on its own (all requests)",
        "",
        *_intents(records),
        "",
    ]
    return "\n".join(lines) + "\n", summary
