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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfcheck.core.answer_reads import ANSWER_READ_HEADLINE
from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.curves import curve_section
from cfcheck.reporting.examples import ExampleGrid, examples_heading, grids_by_weight, load_example_grids
from cfcheck.reporting.html_blocks import COLOURS, PAGE_CSS, card_anchor, chips, e, metric_link
from cfcheck.reporting.html_charts import Calibration, charts_section
from cfcheck.reporting.protocol_text import protocol_labels
from cfcheck.reporting.tables import (
    CATEGORY_NAMES,
    HEADER,
    VERDICT_ORDER,
    count_verdicts,
    format_outcomes,
    group_scores,
    headline,
    is_failing,
    score_rows,
    suite_key,
    verdict_category,
    worst_category,
)

#: example grids shown unfolded; the others are one click away
OPEN_GRIDS = 8
#: upscaling of the example images
IMAGE_SCALE = 2


def render_html(scorecard: dict[str, Any], run_dir: Path | None = None, calibration: Calibration | None = None) -> str:
    """The HTML scorecard. ``run_dir``: the run folder (example grids and their PNGs, inlined).
    ``calibration``: optional score identity key → control → {"value", "expected"} (what
    ``cfcheck calibrate`` keeps, :func:`cfcheck.calibration.store.load_calibration_values`); drawn in
    each chart row as markers for the controls expected to pass (+) or fail (−) that suite."""
    scores = scorecard["scores"]
    grids = load_example_grids(run_dir) if run_dir is not None else []
    word, sentence = headline(scorecard)
    title = e(f"cfcheck scorecard: {scorecard['method']}")
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>",
        f"<meta name='viewport' content='width=device-width'><style>{PAGE_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        # (a run whose method read the domain's answer: class INVALID, one word)
        f"<div class='banner {e('INVALID' if word == ANSWER_READ_HEADLINE else word)}'>{e(sentence)}</div>",
        f"<p class='muted'>status <b>{e(scorecard['status'])}</b> · profile <b>{e(scorecard['profile'].get('name', '-'))}</b>"
        f" · test outcomes: {e(format_outcomes(scorecard.get('outcomes', {})))}"
        f" · finished {e(scorecard['provenance'].get('finished', '?'))}</p>",
        "<div class='top'><div class='counts'>",
        _counts(scores),
        "</div><div>",
        _failures(scores),
        "</div></div>",
        _grids(grids, run_dir, scores),
        _matrices(scores),
        charts_section(scores, calibration),
        curve_section(scores),
        _cards(scores, scorecard),
        _provenance(scorecard),
        _all_scores(scorecard),
        "</body></html>\n",
    ]
    return "\n".join(parts)


def _counts(scores: Sequence[dict[str, Any]]) -> str:
    head = "".join(f"<th class='v-{n}'>{e(CATEGORY_NAMES[n])}</th>" for n in VERDICT_ORDER)
    rows = []
    for kind, group in group_scores(scores, lambda s: s.get("kind", "-")).items():
        rows.append(_count_row(f"<b>{e(kind)}</b> (all suites)", count_verdicts(group), "kind"))
        for (_, suite), suite_scores in group_scores(group, suite_key).items():
            rows.append(_count_row(f"&nbsp;&nbsp;{e(suite)}", count_verdicts(suite_scores), "suite"))
    return (
        f"<h2>Verdicts per kind and suite</h2><table class='counts'><tr><th></th>{head}</tr>"
        + "".join(rows)
        + "</table>"
    )


def _count_row(label: str, counts: dict[str, int], cls: str) -> str:
    cells = "".join(f"<td class='n v-{n}'>{counts[n] or '<span class=dim>0</span>'}</td>" for n in VERDICT_ORDER)
    worst = worst_category(counts) or "none"
    return f"<tr class='{cls}' data-worst='{worst}'><td>{label}</td>{cells}</tr>"


def _matrices(scores: Sequence[dict[str, Any]]) -> str:
    out = [
        "<h2>Tasks × suites</h2>",
        "<p class='muted'>Cells: scores per verdict (✓ pass, ✗ fail, ? inconclusive, ! error, – no bar), "
        "coloured by the worst.</p>",
    ]
    for (kind, domain), group in group_scores(scores, lambda s: (s.get("kind", "-"), s.get("domain", "-"))).items():
        suites = list(dict.fromkeys(s["suite"] for s in group))
        out.append(
            f"<h3>{e(kind)} · {e(domain)}</h3><div class='scroll'><table class='matrix'><tr><th>task</th>"
            + "".join(f"<th>{e(s)}</th>" for s in suites)
            + "</tr>"
        )
        for task, rows in group_scores(group, lambda s: s["task"]).items():
            by_suite = group_scores(rows, lambda s: s["suite"])
            cells = []
            for suite in suites:
                counts = count_verdicts(by_suite.get(suite, []))
                worst = worst_category(counts)
                style = f" style='background:{COLOURS[worst][1]}'" if worst else ""
                cells.append(f"<td class='cell' data-verdict='{worst or 'empty'}'{style}>{chips(counts)}</td>")
            out.append(f"<tr><td class='task'>{e(task)}</td>{''.join(cells)}</tr>")
        out.append("</table></div>")
    return "\n".join(out)


def _failures(scores: Sequence[dict[str, Any]]) -> str:
    failing = [s for s in scores if is_failing(s)]
    if not failing:
        return "<h2>Failing scores</h2><p>None.</p>"
    rows = []
    for (kind, suite, metric), group in group_scores(failing, lambda s: (*suite_key(s), s["metric"])).items():
        total = sum(1 for s in scores if (*suite_key(s), s["metric"]) == (kind, suite, metric))
        values = ", ".join(
            f"<span title='{e(s['task'])}'>{e(s['task'])}: <b>{e(_short_value(s))}</b></span>" for s in group
        )
        thresholds = list(dict.fromkeys(str(s.get("threshold") or "-") for s in group))
        bar = e(thresholds[0]) if len(thresholds) == 1 else "per task"
        reasons = sorted({str(s["reason"]) for s in group if s.get("reason")})
        why = "".join(f"<br><small class='v-error'>{e(r)}</small>" for r in reasons[:3])
        rows.append(
            f"<tr><td>{e(kind)}/{e(suite)}</td><td>{metric_link(metric)}</td><td class='n v-fail'>"
            f"{len(group)}/{total}</td><td>{bar}</td><td><details><summary class='nowrap'>{len(group)} task(s)</summary>"
            f"<small>{values}</small></details>{why}</td></tr>"
        )
    return (
        "<h2>Failing scores</h2><table class='failures'><tr><th>suite</th><th>metric</th><th>failing</th>"
        "<th>bar</th><th>tasks</th></tr>" + "".join(rows) + "</table>"
    )


def _short_value(score: dict[str, Any]) -> str:
    value = score.get("value")
    text = "nan" if value is None else f"{value:.3g}"
    if score.get("verdict") == "error":
        text = "error"
    return text + (" (regressed)" if score.get("regressed") else "")


def _grids(grids: Sequence[ExampleGrid], run_dir: Path | None, scores: Sequence[dict[str, Any]]) -> str:
    if not grids:
        return ""
    verdicts = group_scores(scores, lambda s: (s.get("kind", "-"), s.get("domain", "-"), s["task"]))
    out = [
        f"<h2>{e(examples_heading(grids))}</h2><p class='muted'>Seeded inputs of each task (columns); difference: "
        "red where the output is brighter, blue where darker. Summary: the task's verdicts.</p><div class='grids'>"
    ]
    for i, grid in enumerate(grids_by_weight(grids, scores)):
        counts = count_verdicts(verdicts.get((grid.kind, grid.domain, grid.task), []))
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


def _card_of_stored(name: str, cards: Any) -> str:
    """The card a stored metric name names, read in either spelling (:meth:`MetricKey.read`); a name that is
    no key is its own card part."""
    try:
        return MetricKey.read(str(name), cards).card
    except ValueError:
        return MetricKey.card_part(name)


def _domain_bar_lines(scorecard: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """(label, text) of each domain's own bar on card ``key`` (its variants too), from the scorecard."""
    from cfcheck.metrics.cards import CARDS

    lines = []
    for domain, facts in sorted(((scorecard.get("profile") or {}).get("domains") or {}).items()):
        if not isinstance(facts, dict) or facts.get("bars") not in ("calibrated", "uncalibrated", "cards"):
            continue
        own = {
            k: v for k, v in (facts.get("domain_bars") or {}).items() if _card_of_stored(k, CARDS) == key
        }  # the card or a variant of it (card:variant; card_variant in scorecards written before one spelling)
        if not own and facts["bars"] != "cards":  # a bundled domain lists only the bars it adds to the cards'
            lines.append(
                (
                    f"bar on {domain}",
                    "none: the domain is uncalibrated (cfcheck calibrate --domain)"
                    if facts["bars"] == "uncalibrated"
                    else "none: its controls did not separate",
                )
            )
        lines += [
            (f"bar on {domain}" + (f" ({k})" if k != key else ""), f"{v['bar']}: {v['rationale']}")
            for k, v in sorted(own.items())
        ]
    return lines


def _cards(scores: Sequence[dict[str, Any]], scorecard: dict[str, Any] | None = None) -> str:
    from cfcheck.metrics.card import DIFFERENCES_HEADING, difference_lines
    from cfcheck.metrics.cards import CARDS
    from cfcheck.reporting.card_evidence import scorecard_evidence

    keys = list(dict.fromkeys(MetricKey.card_part(s["metric"]) for s in scores))
    out = ["<h2>Metric cards</h2><p class='muted'>What each score measures, its bar and why the bar sits there.</p>"]
    for key in [k for k in keys if k in CARDS]:
        card = CARDS[key]
        bar = card.bar.describe() if card.bar is not None else "none (reported without a verdict)"
        bar += "".join(f"; {name} profile: {b.describe()}" for name, b in card.profile_bars.items())
        fields = [
            ("formula", card.formula),
            ("direction", f"{card.direction} is better" if card.direction != "none" else "none"),
            ("range", f"[{card.range[0]:g}, {card.range[1]:g}] {card.units}"),
            ("normalisation", card.normalisation),
            ("abstentions", card.abstentions),
            ("bar (bundled domains)", bar),
            ("rationale", card.rationale or "-"),
            *scorecard_evidence(scorecard or {}, key),
            *_domain_bar_lines(scorecard or {}, key),
            ("citation", card.citation),
            ("notes", card.notes or "-"),
            *((DIFFERENCES_HEADING, text) for text in difference_lines(card)),
        ]
        items = "".join(f"<dt>{e(name)}</dt><dd>{e(value)}</dd>" for name, value in fields)
        out.append(
            f"<details class='card' id='{card_anchor(key)}'><summary><b>{e(card.name)}</b> "
            f"<code>{e(key)}</code></summary><dl>{items}</dl></details>"
        )
    return "\n".join(out)


def _provenance(scorecard: dict[str, Any]) -> str:
    prov = dict(scorecard.get("provenance", {}))
    models = prov.pop("reference_models", {}) or {}
    generation = prov.pop("generation", {}) or {}
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in prov.items())
    rows += "".join(
        f"<tr><th>model {e(k)}</th><td><code>{e(str(v)[:16])}…</code></td></tr>" for k, v in sorted(models.items())
    )
    gen = e(json.dumps(generation, indent=1, sort_keys=True, default=str))
    costs = e(json.dumps(scorecard.get("costs", {}), indent=1, sort_keys=True, default=str))
    protocols = "".join(f"<p class='muted protocol'>protocol {e(label)}</p>" for label in protocol_labels(scorecard))
    return (
        f"<h2>Provenance</h2>{protocols}<table class='provenance'>{rows}</table><details><summary>generation</summary>"
        f"<pre>{gen}</pre></details><details><summary>costs</summary><pre>{costs}</pre></details>"
    )


def _all_scores(scorecard: dict[str, Any]) -> str:
    rows = score_rows(scorecard)
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join(
        f"<tr class='v-{verdict_category(score)}'>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
        for row, score in zip(rows, scorecard["scores"])
    )
    return (
        f"<h2>All scores</h2><details class='all'><summary>all {len(rows)} scores</summary>"
        f"<table><tr>{head}</tr>{body}</table></details>"
    )
