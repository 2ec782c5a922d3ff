"""``scorecard.md``: the scorecard as GitHub-flavoured Markdown.

Reading order: the verdict, a summary table per kind (one row per classifier, i.e. the first
part of the task id, its column named by :meth:`Scorecard.task_group_label`, with pass counts per
suite and the key metrics' values), the failing scores, the example grids (tables of the PNG files
beside the scorecard, by relative path) and last the full table of scores, folded. Every string from the method or the run is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.curves import curve_table
from cfcheck.reporting.examples import ExampleGrid, examples_heading, grids_by_weight, load_example_grids
from cfcheck.reporting.model import Scorecard, ScoreGroup
from cfcheck.reporting.protocol_text import protocol_label
from cfcheck.reporting.tables import HEADER, format_outcomes

#: width of an example image in the Markdown grids (GitHub shows <img width=...>)
IMAGE_WIDTH = 56
_MARKS = {"fail": "❌", "inconclusive": "⚠️", "pass": "✅", "none": "➖"}


def render_markdown(scorecard: Scorecard | Mapping[str, Any], run_dir: Path | None = None) -> str:
    """The Markdown scorecard.

    Args:
        scorecard: the scorecard (a scorecard JSON is read with :meth:`Scorecard.from_json`).
        run_dir: the folder it is written to, which holds the example grids (None: no grids).
    """
    card = Scorecard.of(scorecard)
    grids = load_example_grids(run_dir) if run_dir is not None else []
    lines = _head(card)
    lines += _summary(card)
    lines += _failures(card.scores)
    lines += _grids(grids_by_weight(grids, card.scores.data()))
    table = curve_table(card.scores.data())
    lines += [table] if table else []
    lines += _all_scores(card)
    lines += _provenance(card)
    return "\n".join(lines) + "\n"


def md(text: Any) -> str:
    """``text`` safe inside a Markdown table cell, on one line: no tag can open (``&`` and ``<``
    as entities), no cell can end (``|``), no code span, emphasis or inline link can start."""
    escaped = str(text).replace("&", "&amp;").replace("<", "&lt;")
    for char in ("\\", "|", "`", "*"):
        escaped = escaped.replace(char, "\\" + char)
    return " ".join(escaped.replace("](", "]\\(").split())


def pass_count(scores: ScoreGroup) -> str:
    """Mark and "passed/with a bar", e.g. "❌ 7/9"; "–" when no score has a bar."""
    counts = scores.counts
    barred = counts["pass"] + counts["fail"] + counts["inconclusive"] + counts["error"]
    if not barred:
        return "–"
    if scores.any_failing:
        mark = _MARKS["fail"]
    else:
        mark = _MARKS["inconclusive"] if counts["inconclusive"] else _MARKS["pass"]
    return f"{mark} {counts['pass']}/{barred}"


def key_metrics(suites: Mapping[str, ScoreGroup], order: Mapping[str, int] | None = None) -> dict[str, str]:
    """Suite → its key metric: the first metric with a bar in metric-card order (else the first).

    Args:
        suites: suite → its scores.
        order: card key → its place (:attr:`Scorecard.card_order`, which places the scorecard's own
            cards); None: the registry's order.
    """
    if order is None:
        from cfcheck.kinds.registry import loaded_cards

        order = {key: i for i, key in enumerate(loaded_cards())}
    chosen = {}
    for suite, group in suites.items():
        metrics = list(dict.fromkeys(s.metric for s in group))
        barred = [m for m in metrics if any(s.metric == m and s.threshold for s in group)]
        candidates = barred or metrics
        chosen[suite] = min(candidates, key=lambda m: (order.get(MetricKey.card_part(m), len(order)), metrics.index(m)))
    return chosen


def headline_value(scores: ScoreGroup) -> str:
    """One value, or the range "low–high" of several (tasks of one classifier)."""
    values = [s.value for s in scores if isinstance(s.value, (int, float)) and math.isfinite(s.value)]
    if not values:
        return "–"
    low, high = min(values), max(values)
    text = f"{low:.3g}" if low == high else f"{low:.3g}–{high:.3g}"
    return f"**{text}** ✗" if scores.any_failing else text


def _head(card: Scorecard) -> list[str]:
    prov = card.provenance
    word, sentence = card.headline
    return [
        f"# cfcheck scorecard: {md(card.method)}",
        "",
        "![cfcheck badge](badge.svg)",
        "",
        f"**{md(word)}**{md(sentence[len(word) :])}",
        "",
        f"- status: **{md(card.status)}**, profile {md(card.profile.get('name', '-'))}, "
        f"test outcomes: {md(format_outcomes(card.outcomes))}",
        f"- cfcheck {md(prov.get('cfcheck_version', '?'))} ({md(prov.cfcheck_commit or 'no commit')}), "
        f"finished {md(prov.get('finished', '?'))}",
        *(f"- protocol {md(label)}" for label in card.protocol_labels),
        "",
    ]


def _summary(card: Scorecard) -> list[str]:
    lines = ["## Summary", ""]
    if not card.scores:
        return lines + ["No scores were recorded.", ""]
    for section in card.sections.values():
        suites = list(section.suites)
        keys = key_metrics(section.suites, card.card_order)
        metrics = list(dict.fromkeys(keys[suite] for suite in suites))
        lines += [f"### {md(section.kind)} · {md(section.domain)}", ""]
        header = [card.task_group_label(section.kind), *(md(s) for s in suites), *(md(m) for m in metrics)]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for name, rows in section.scores.by_task_group().items():
            by_suite = rows.by_suite()
            by_metric = rows.by_metric()
            cells = [md(name)]
            cells += [pass_count(by_suite.get(suite, ScoreGroup())) for suite in suites]
            cells += [headline_value(by_metric.get(metric, ScoreGroup())) for metric in metrics]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "Pass counts: scores that pass / scores with a bar; key metrics: value range over the tasks "
        "(bold with ✗: a task fails).",
        "",
    ]
    return lines


def _failures(scores: ScoreGroup) -> list[str]:
    failing = scores.failing()
    lines = ["## Failing scores", ""]
    if not failing:
        return lines + ["None.", ""]
    suites = failing.by_kind_suite()
    lines.append(", ".join(f"{md(k)}/{md(s)}: {len(g)}" for (k, s), g in suites.items()))
    lines += ["", "| kind | suite | metric | task | value [95% CI] | bar | verdict |", "|---|---|---|---|---|---|---|"]
    for s in failing:
        verdict = s.verdict or "-"
        if s.reason:
            verdict += f": {s.reason}"
        if s.regressed:
            verdict += " (regressed)"
        cells = [s.kind, s.suite, s.metric, s.task, s.value_text, s.threshold or "-", verdict]
        lines.append("| " + " | ".join(md(c) for c in cells) + " |")
    return lines + [""]


def _grids(grids: Sequence[ExampleGrid]) -> list[str]:
    if not grids:
        return []
    lines = [
        f"## {examples_heading(grids)}",
        "",
        "Rows: what each column of the task shows; columns: the seeded "
        "example inputs (difference: red where the counterfactual is brighter, blue where darker).",
        "",
    ]
    for grid in grids:
        lines += [f"### {md(grid.kind)} · {md(grid.domain)} · {md(grid.task)}", ""]
        lines += ["| | " + " | ".join(str(i) for i in range(len(grid.rows))) + " |", "|---|" + "---|" * len(grid.rows)]
        for column in grid.columns:
            cells = [_image(row.get(column), column) for row in grid.rows]
            lines.append(f"| {md(column)} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _image(path: str | None, column: str) -> str:
    if not path:
        return ""
    return f'<img src="{html.escape(path)}" width="{IMAGE_WIDTH}" alt="{html.escape(column)}">'


def _all_scores(card: Scorecard) -> list[str]:
    rows = card.rows()
    lines = ["## All scores", "", f"<details><summary>{len(rows)} scores</summary>", ""]
    lines += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return lines + ["", "</details>", ""]


def _provenance(card: Scorecard) -> list[str]:
    prov = card.provenance
    lines = ["## Provenance", ""]
    for key in (
        "cfcheck_version",
        "cfcheck_commit",
        "torch_version",
        "python_version",
        "platform",
        "device",
        "seeds",
        "started",
        "finished",
    ):
        if key in prov.data:
            lines.append(f"- {key.replace('_', ' ')}: {md(prov.data[key])}")
    read = prov.answer_read
    if read:  # the method read the domain's answer: say what, as the headline does
        lines.append(
            f"- answer read (not a valid submission): {md(', '.join(map(str, read.get('what', []))))}; "
            f"{md(read.get('calls', 0))} reads"
        )
    generation = prov.get("generation") or {}
    if generation:
        lines.append("- generation: " + ", ".join(f"{md(k)} {md(v)}" for k, v in sorted(generation.items())))
    models = prov.get("reference_models") or {}
    if models:
        lines += ["", "Reference models (sha256):", ""]
        lines += [f"- {md(name)}: `{md(str(digest)[:16])}…`" for name, digest in sorted(models.items())]
    lines += _protocol_parts(card)
    return lines


def _protocol_parts(card: Scorecard) -> list[str]:
    """Each protocol with its parts' digests (what a reader compares to see what differs)."""
    protocols = card.protocols
    if not protocols:
        return []
    lines = ["", "Protocols (sha256 of each part; `cfcheck protocols` lists the current ones):", ""]
    for key in sorted(protocols):
        parts = protocols[key].get("parts") or {}
        digests = ", ".join(f"{md(part)} `{md(str(digest)[:12])}`" for part, digest in parts.items())
        lines.append(f"- {md(protocol_label(protocols[key]))}" + (f": {digests}" if digests else ""))
    return lines
