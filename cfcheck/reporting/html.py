"""``scorecard.html``: the scorecard as one self-contained page that opens from disk.

Top to bottom: the overall verdict; the counts per kind and suite beside the failing scores grouped
by metric; the example grids (PNG files inlined as data URIs, upscaled pixelated); a task × suite
matrix coloured by verdict (scrolling in its own box where wider than the page); one chart per metric (value and 95% CI per task against its
bar and the real-vs-real floor), the metric cards, the provenance and, folded, the full table of
scores. No script, no external resource: CSS and SVG inline. Every string from the method or
the run goes through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfcheck.core.answer_reads import ANSWER_READ_HEADLINE
from cfcheck.reporting.curves import curve_section
from cfcheck.reporting.examples import ExampleGrid, examples_heading, grids_by_weight, load_example_grids
from cfcheck.reporting.html_blocks import COLOURS, PAGE_CSS, chips, e, metric_link
from cfcheck.reporting.html_cards import cards_section
from cfcheck.reporting.html_charts import charts_section
from cfcheck.reporting.model import Score, Scorecard, ScoreGroup
from cfcheck.reporting.tables import CATEGORY_NAMES, HEADER, VERDICT_ORDER, format_outcomes

#: example grids shown unfolded; the others are one click away
OPEN_GRIDS = 8
#: upscaling of the example images
IMAGE_SCALE = 2


def render_html(scorecard: Scorecard | Mapping[str, Any], run_dir: Path | None = None) -> str:
    """The HTML scorecard, from the scorecard alone: the controls' markers in the charts and their
    measured values in the metric cards come from its ``calibration`` section
    (:mod:`cfcheck.reporting.calibration_section`; a scorecard without one says so and has neither).

    Args:
        scorecard: the scorecard (a scorecard JSON is read with :meth:`Scorecard.from_json`).
        run_dir: the run folder, which holds the example grids and their PNGs (inlined); None: no grids.
    """
    card = Scorecard.of(scorecard)
    scores = card.scores
    grids = load_example_grids(run_dir) if run_dir is not None else []
    word, sentence = card.headline
    title = e(f"cfcheck scorecard: {card.method}")
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>",
        f"<meta name='viewport' content='width=device-width'><style>{PAGE_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        # (a run whose method read the domain's answer: class INVALID, one word)
        f"<div class='banner {e('INVALID' if word == ANSWER_READ_HEADLINE else word)}'>{e(sentence)}</div>",
        f"<p class='muted'>status <b>{e(card.status)}</b> · profile <b>{e(card.profile.get('name', '-'))}</b>"
        f" · test outcomes: {e(format_outcomes(card.outcomes))}"
        f" · finished {e(card.provenance.get('finished', '?'))}</p>",
        "<div class='top'><div class='counts'>",
        _counts(scores),
        "</div><div>",
        _failures(scores),
        "</div></div>",
        _grids(grids, run_dir, scores),
        _matrices(card),
        charts_section(card),
        curve_section(scores.data()),
        cards_section(card),
        _provenance(card),
        _all_scores(card),
        "</body></html>\n",
    ]
    return "\n".join(parts)


def _counts(scores: ScoreGroup) -> str:
    head = "".join(f"<th class='v-{n}'>{e(CATEGORY_NAMES[n])}</th>" for n in VERDICT_ORDER)
    rows = []
    for kind, group in scores.by_kind().items():
        rows.append(_count_row(f"<b>{e(kind)}</b> (all suites)", group, "kind"))
        for suite, suite_scores in group.by_suite().items():
            rows.append(_count_row(f"&nbsp;&nbsp;{e(suite)}", suite_scores, "suite"))
    return (
        f"<h2>Verdicts per kind and suite</h2><table class='counts'><tr><th></th>{head}</tr>"
        + "".join(rows)
        + "</table>"
    )


def _count_row(label: str, group: ScoreGroup, cls: str) -> str:
    counts = group.counts
    cells = "".join(f"<td class='n v-{n}'>{counts[n] or '<span class=dim>0</span>'}</td>" for n in VERDICT_ORDER)
    worst = group.worst or "none"
    return f"<tr class='{cls}' data-worst='{worst}'><td>{label}</td>{cells}</tr>"


def _matrices(card: Scorecard) -> str:
    out = [
        "<h2>Tasks × suites</h2>",
        "<p class='muted'>Cells: scores per verdict (✓ pass, ✗ fail, ? inconclusive, ! error, – no bar), "
        "coloured by the worst.</p>",
    ]
    for section in card.sections.values():
        suites = list(section.suites)
        out.append(
            f"<h3>{e(section.kind)} · {e(section.domain)}</h3><div class='scroll'><table class='matrix'><tr><th>task</th>"
            + "".join(f"<th>{e(s)}</th>" for s in suites)
            + "</tr>"
        )
        for task, rows in section.scores.by_task().items():
            by_suite = rows.by_suite()
            cells = []
            for suite in suites:
                group = by_suite.get(suite, ScoreGroup())
                counts, worst = group.counts, group.worst
                style = f" style='background:{COLOURS[worst][1]}'" if worst else ""
                cells.append(f"<td class='cell' data-verdict='{worst or 'empty'}'{style}>{chips(counts)}</td>")
            out.append(f"<tr><td class='task'>{e(task)}</td>{''.join(cells)}</tr>")
        out.append("</table></div>")
    return "\n".join(out)


#: failing metrics listed beside the verdict counts; the rest fold into one expander, so the example
#: grids stay on the first screen of a method that fails many bars
FAILURES_SHOWN = 12


def _failures(scores: ScoreGroup) -> str:
    failing = scores.failing()
    if not failing:
        return "<h2>Failing scores</h2><p>None.</p>"
    totals = {key: len(group) for key, group in scores.by_kind_suite_metric().items()}
    rows = []
    for (kind, suite, metric), group in failing.by_kind_suite_metric().items():
        total = totals[kind, suite, metric]
        values = ", ".join(f"<span title='{e(s.task)}'>{e(s.task)}: <b>{e(_short_value(s))}</b></span>" for s in group)
        thresholds = list(dict.fromkeys(str(s.threshold or "-") for s in group))
        bar = e(thresholds[0]) if len(thresholds) == 1 else "per task"
        reasons = sorted({str(s.reason) for s in group if s.reason})
        why = "".join(f"<br><small class='v-error'>{e(r)}</small>" for r in reasons[:3])
        rows.append(
            f"<tr><td>{e(kind)}/{e(suite)}</td><td>{metric_link(metric)}</td><td class='n v-fail'>"
            f"{len(group)}/{total}</td><td>{bar}</td><td><details><summary class='nowrap'>{len(group)} task(s)</summary>"
            f"<small>{values}</small></details>{why}</td></tr>"
        )
    header = "<tr><th>suite</th><th>metric</th><th>failing</th><th>bar</th><th>tasks</th></tr>"
    shown, rest = rows[:FAILURES_SHOWN], rows[FAILURES_SHOWN:]
    more = (
        f"<details><summary>{len(rest)} more failing metric(s)</summary><table class='failures'>{header}"
        + "".join(rest)
        + "</table></details>"
        if rest
        else ""
    )
    return f"<h2>Failing scores</h2><table class='failures'>{header}" + "".join(shown) + "</table>" + more


def _short_value(score: Score) -> str:
    value = score.value
    text = "nan" if value is None else f"{value:.3g}"
    if score.verdict == "error":
        text = "error"
    return text + (" (regressed)" if score.regressed else "")


def _grids(grids: Sequence[ExampleGrid], run_dir: Path | None, scores: ScoreGroup) -> str:
    if not grids:
        return ""
    verdicts = scores.by_section_task()
    out = [
        f"<h2>{e(examples_heading(grids))}</h2><p class='muted'>Seeded inputs of each task (columns); difference: "
        "red where the output is brighter, blue where darker. Summary: the task's verdicts.</p><div class='grids'>"
    ]
    for i, grid in enumerate(grids_by_weight(grids, scores.data())):
        counts = verdicts.get((grid.kind, grid.domain, grid.task), ScoreGroup()).counts
        body = "".join(
            f"<tr><th>{e(column)}</th>"
            + "".join(f"<td>{_image(run_dir, row.get(column), column)}</td>" for row in grid.rows)
            + "</tr>"
            for column in grid.columns
        )
        out.append(
            f"<details class='grid'{' open' if i < OPEN_GRIDS else ''}><summary>{e(grid.kind)} · "
            f"{e(grid.task)} {chips(counts)}</summary><table>{body}</table></details>"
        )
    return "\n".join(out) + "</div>"


def _image(run_dir: Path | None, relative: str | None, column: str) -> str:
    """An <img> with the PNG inlined; a missing or outside file is named, never fetched."""
    if not relative or run_dir is None:
        return ""
    root = Path(run_dir).resolve()
    path = (root / relative).resolve()
    if root not in path.parents or path.suffix.lower() != ".png" or not path.is_file():
        return f"<small class='dim'>missing {e(relative)}</small>"
    data = path.read_bytes()
    width, height = _png_size(data)
    size = f" width='{width * IMAGE_SCALE}' height='{height * IMAGE_SCALE}'" if width else ""
    encoded = base64.b64encode(data).decode("ascii")
    return f"<img class='ex' alt='{e(column)}' title='{e(relative)}'{size} src='data:image/png;base64,{encoded}'>"


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0, 0
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _provenance(card: Scorecard) -> str:
    prov = dict(card.provenance.data)
    models = prov.pop("reference_models", {}) or {}
    generation = prov.pop("generation", {}) or {}
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in prov.items())
    rows += "".join(
        f"<tr><th>model {e(k)}</th><td><code>{e(str(v)[:16])}…</code></td></tr>" for k, v in sorted(models.items())
    )
    gen = e(json.dumps(generation, indent=1, sort_keys=True, default=str))
    costs = e(json.dumps(card.costs, indent=1, sort_keys=True, default=str))
    protocols = "".join(f"<p class='muted protocol'>protocol {e(label)}</p>" for label in card.protocol_labels)
    return (
        f"<h2>Provenance</h2>{protocols}<table class='provenance'>{rows}</table><details><summary>generation</summary>"
        f"<pre>{gen}</pre></details><details><summary>costs</summary><pre>{costs}</pre></details>"
    )


def _all_scores(card: Scorecard) -> str:
    rows = card.rows()
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join(
        f"<tr class='v-{score.category}'>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
        for row, score in zip(rows, card.scores)
    )
    return (
        f"<h2>All scores</h2><details class='all'><summary>all {len(rows)} scores</summary>"
        f"<table><tr>{head}</tr>{body}</table></details>"
    )
