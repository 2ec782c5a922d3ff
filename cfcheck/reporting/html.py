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
import html
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfcheck.metrics.key import MetricKey
#: Score identity key → control name → {"value": float, "expected": "+" | "-" | ""}.
Calibration = dict[str, dict[str, dict[str, Any]]]

from cfcheck.reporting.curves import curve_section
from cfcheck.reporting.examples import ExampleGrid, examples_heading, grids_by_weight, load_example_grids
from cfcheck.reporting.tables import (
    CATEGORY_NAMES,
    HEADER,
    VERDICT_ORDER,
    count_verdicts,
    format_outcomes,
    format_value,
    group_scores,
    headline,
    is_failing,
    score_rows,
    suite_key,
    verdict_category,
    worst_category,
)

#: dot / text colour and cell background of each verdict category
COLOURS = {"pass": ("#2e7d32", "#d7f0d8"), "fail": ("#c62828", "#f9d0d0"), "inconclusive": ("#b77c00", "#fff0bf"),
           "error": ("#6a1b9a", "#ead7f3"), "none": ("#78909c", "#eceff1")}
#: example grids shown unfolded; the others are one click away
OPEN_GRIDS = 8
#: upscaling of the example images
IMAGE_SCALE = 2

PAGE_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1240px;padding:12px 20px;color:#222}
h1{font-size:1.4em;margin:.2em 0;word-break:break-all}h2{font-size:1.15em;margin:1.2em 0 .4em;border-bottom:1px solid #ddd}
h3{font-size:1em;margin:.8em 0 .3em}small,.muted{color:#666}
.banner{font-size:1.35em;font-weight:600;padding:10px 16px;border-radius:6px;color:#fff;margin:8px 0}
.banner.PASS{background:#2e7d32}.banner.FAIL{background:#c62828}.banner.INCOMPLETE{background:#616161}.banner.REPORTED{background:#1565c0}
.top{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}.top>div{flex:1 1 460px;min-width:0}
.top>div.counts{flex:0 1 auto}.nowrap{white-space:nowrap}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 7px;border-bottom:1px solid #e4e4e4;text-align:left}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v-pass{color:#2e7d32}.v-fail{color:#c62828;font-weight:600}.v-inconclusive{color:#b77c00}.v-error{color:#6a1b9a;font-weight:600}.v-none{color:#78909c}
.scroll{overflow-x:auto;max-width:100%}.matrix td{text-align:center;min-width:56px;border:1px solid #fff;white-space:nowrap}.matrix td.task{text-align:left;font-family:monospace;background:none}
.chip{display:inline-block;margin:0 2px;font-size:12px}.dim{color:#bbb}
.grids{display:flex;flex-wrap:wrap;align-items:flex-start;gap:10px 18px}.grid{border:1px solid #ddd;border-radius:5px;padding:4px 8px}
.grid summary{cursor:pointer;font-family:monospace}.grid td{padding:1px;border:none;text-align:center}
.grid th{background:none;font-weight:normal;font-size:11px;color:#555;padding-right:4px;text-align:right;width:72px;white-space:normal}
img.ex{image-rendering:pixelated;image-rendering:crisp-edges;display:block;background:#000}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{border:1px solid #e4e4e4;border-radius:5px;padding:4px 6px}
.chart h4{margin:0;font-size:13px}.chart h4 span{font-weight:normal;color:#555}
details>summary{cursor:pointer}.card{margin:4px 0 8px;padding:4px 10px;border-left:3px solid #90a4ae}
.card dt{font-weight:600;float:left;clear:left;width:110px}.card dd{margin:0 0 2px 120px}
pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}a{color:#1a5fb4}
"""


def render_html(scorecard: dict[str, Any], run_dir: Path | None = None,
                calibration: Calibration | None = None) -> str:
    """The HTML scorecard. ``run_dir``: the run folder (example grids and their PNGs, inlined).
    ``calibration``: optional score identity key → control → {"value", "expected"} (what
    ``cfcheck calibrate`` keeps, :func:`cfcheck.calibration_store.load_calibration_values`); drawn in
    each chart row as markers for the controls expected to pass (+) or fail (−) that suite."""
    scores = scorecard["scores"]
    grids = load_example_grids(run_dir) if run_dir is not None else []
    word, sentence = headline(scorecard)
    title = e(f"cfcheck scorecard: {scorecard['method']}")
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>",
        f"<meta name='viewport' content='width=device-width'><style>{PAGE_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
        f"<div class='banner {e(word)}'>{e(sentence)}</div>",
        f"<p class='muted'>status <b>{e(scorecard['status'])}</b> · profile <b>{e(scorecard['profile'].get('name', '-'))}</b>"
        f" · test outcomes: {e(format_outcomes(scorecard.get('outcomes', {})))}"
        f" · finished {e(scorecard['provenance'].get('finished', '?'))}</p>",
        "<div class='top'><div class='counts'>", _counts(scores), "</div><div>", _failures(scores), "</div></div>",
        _grids(grids, run_dir, scores),
        _matrices(scores),
        _charts(scores, calibration),
        curve_section(scores),
        _cards(scores, scorecard),
        _provenance(scorecard),
        _all_scores(scorecard),
        "</body></html>\n",
    ]
    return "\n".join(parts)


def e(text: Any) -> str:
    """``text`` as HTML text or attribute value."""
    return html.escape(str(text), quote=True)


def card_anchor(metric: str) -> str:
    """The id of a metric's card section ("oracle_score:oracle_lenet" → "card-oracle_score")."""
    return "card-" + re.sub(r"[^A-Za-z0-9_-]", "-", MetricKey.parse(metric).card)


def _metric_link(metric: str) -> str:
    return f"<a href='#{card_anchor(metric)}'>{e(metric)}</a>"


def _chips(counts: dict[str, int]) -> str:
    shown = [f"<span class='chip v-{name}' title='{e(CATEGORY_NAMES[name])}'>{counts[name]} {_SYMBOL[name]}</span>"
             for name in VERDICT_ORDER if counts.get(name)]
    return "".join(shown) or "<span class='dim'>·</span>"


_SYMBOL = {"pass": "✓", "fail": "✗", "inconclusive": "?", "error": "!", "none": "–"}


def _counts(scores: Sequence[dict[str, Any]]) -> str:
    head = "".join(f"<th class='v-{n}'>{e(CATEGORY_NAMES[n])}</th>" for n in VERDICT_ORDER)
    rows = []
    for kind, group in group_scores(scores, lambda s: s.get("kind", "-")).items():
        rows.append(_count_row(f"<b>{e(kind)}</b> (all suites)", count_verdicts(group), "kind"))
        for (_, suite), suite_scores in group_scores(group, suite_key).items():
            rows.append(_count_row(f"&nbsp;&nbsp;{e(suite)}", count_verdicts(suite_scores), "suite"))
    return (f"<h2>Verdicts per kind and suite</h2><table class='counts'><tr><th></th>{head}</tr>"
            + "".join(rows) + "</table>")


def _count_row(label: str, counts: dict[str, int], cls: str) -> str:
    cells = "".join(f"<td class='n v-{n}'>{counts[n] or '<span class=dim>0</span>'}</td>" for n in VERDICT_ORDER)
    worst = worst_category(counts) or "none"
    return f"<tr class='{cls}' data-worst='{worst}'><td>{label}</td>{cells}</tr>"


def _matrices(scores: Sequence[dict[str, Any]]) -> str:
    out = ["<h2>Tasks × suites</h2>",
           "<p class='muted'>Cells: scores per verdict (✓ pass, ✗ fail, ? inconclusive, ! error, – no bar), "
           "coloured by the worst.</p>"]
    for (kind, domain), group in group_scores(scores, lambda s: (s.get("kind", "-"), s.get("domain", "-"))).items():
        suites = list(dict.fromkeys(s["suite"] for s in group))
        out.append(f"<h3>{e(kind)} · {e(domain)}</h3><div class='scroll'><table class='matrix'><tr><th>task</th>"
                   + "".join(f"<th>{e(s)}</th>" for s in suites) + "</tr>")
        for task, rows in group_scores(group, lambda s: s["task"]).items():
            by_suite = group_scores(rows, lambda s: s["suite"])
            cells = []
            for suite in suites:
                counts = count_verdicts(by_suite.get(suite, []))
                worst = worst_category(counts)
                style = f" style='background:{COLOURS[worst][1]}'" if worst else ""
                cells.append(f"<td class='cell' data-verdict='{worst or 'empty'}'{style}>{_chips(counts)}</td>")
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
        rows.append(f"<tr><td>{e(kind)}/{e(suite)}</td><td>{_metric_link(metric)}</td><td class='n v-fail'>"
                    f"{len(group)}/{total}</td><td>{bar}</td><td><details><summary class='nowrap'>{len(group)} task(s)</summary>"
                    f"<small>{values}</small></details>{why}</td></tr>")
    return ("<h2>Failing scores</h2><table class='failures'><tr><th>suite</th><th>metric</th><th>failing</th>"
            "<th>bar</th><th>tasks</th></tr>" + "".join(rows) + "</table>")


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
    out = [f"<h2>{e(examples_heading(grids))}</h2><p class='muted'>Seeded inputs of each task (columns); difference: "
           "red where the output is brighter, blue where darker. Summary: the task's verdicts.</p><div class='grids'>"]
    for i, grid in enumerate(grids_by_weight(grids, scores)):
        counts = count_verdicts(verdicts.get((grid.kind, grid.domain, grid.task), []))
        body = "".join(
            f"<tr><th>{e(column)}</th>" + "".join(f"<td>{_image(run_dir, row.get(column), column)}</td>" for row in grid.rows)
            + "</tr>" for column in grid.columns
        )
        out.append(f"<details class='grid'{' open' if i < OPEN_GRIDS else ''}><summary>{e(grid.kind)} · "
                   f"{e(grid.task)} {_chips(counts)}</summary><table>{body}</table></details>")
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


def _charts(scores: Sequence[dict[str, Any]], calibration: Calibration | None) -> str:
    out = ["<h2>Scores per metric</h2><p class='muted'>Per task: ● value (coloured by verdict) with its 95% CI; "
           "<span style='color:#333'>┃</span> the bar; <span style='color:#78909c'>◆</span> the real-vs-real floor "
           "(highest draw, band: all draws)"
           + ("; what the bundled controls reached on the same score (hover for the name): "
              f"<span style='color:{CONTROL_COLOURS['+']}'>▲</span> a control expected to pass this suite, "
              f"<span style='color:{CONTROL_COLOURS['-']}'>▼</span> one expected to fail it (dotted at the edge: "
              "off the scale)"
              if calibration else "") + ".</p>"]
    for (kind, suite), group in group_scores(scores, suite_key).items():
        failing = any(is_failing(s) for s in group)
        charts = [_chart(metric, rows, [_controls(s, calibration) for s in rows])
                  for metric, rows in group_scores(group, lambda s: s["metric"]).items()]
        out.append(f"<details{' open' if failing else ''}><summary><b>{e(kind)}/{e(suite)}</b> "
                   f"{_chips(count_verdicts(group))}</summary><div class='charts'>{''.join(charts)}</div></details>")
    return "\n".join(out)


#: Marker colours of controls expected to pass (+) and to fail (−) a suite.
CONTROL_COLOURS = {"+": "#2e7d32", "-": "#c62828"}


def _controls(score: dict[str, Any], calibration: Calibration | None) -> list[tuple[str, float, str]]:
    """(control, value, expected sign) of the controls with a sign for this score's suite."""
    from cfcheck.core.records import identity_key

    if not calibration:
        return []
    key = identity_key(score.get("kind", "-"), score.get("domain", "-"), score["suite"], score["metric"], score["task"])
    found = []
    for name, entry in sorted(calibration.get(key, {}).items()):
        value, sign = entry.get("value"), entry.get("expected", "")
        if sign in CONTROL_COLOURS and _finite(value):
            found.append((name, float(value), sign))
    return found


def bounds(threshold: str | None) -> list[float]:
    """The numeric bounds in a threshold text: ">= 0.8" → [0.8]; "<= 2 × floor = 7.447" → [7.447];
    an unresolved floor-relative bar ("<= 2 × floor") → []."""
    found = []
    for part in (threshold or "").split(" and "):
        resolved = re.search(r"=\s*([-+]?[0-9.]+(?:e[-+]?\d+)?)\s*$", part)
        plain = re.match(r"\s*[<>]=?\s*([-+]?[0-9.]+(?:e[-+]?\d+)?)\s*$", part)
        match = resolved if "floor" in part else plain
        if match:
            try:
                found.append(float(match.group(1)))
            except ValueError:
                continue
    return found


def _floor(score: dict[str, Any]) -> tuple[float, float, float] | None:
    """(lowest, highest, bar's) floor draw of ``extra.real_floor`` (one number or a list)."""
    draws = (score.get("extra") or {}).get("real_floor")
    draws = draws if isinstance(draws, list) else [draws]
    draws = [float(d) for d in draws if isinstance(d, (int, float)) and math.isfinite(d)]
    return (min(draws), max(draws), max(draws)) if draws else None


def _finite(*values: Any) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]


def _chart(metric: str, rows: Sequence[dict[str, Any]], controls: Sequence[list[tuple[str, float, str]]]) -> str:
    label_w, plot_w, top = 150, 210, 16
    row_h = 20 if any(controls) else 14  # room for the control markers above and below a row
    height = top + row_h * len(rows) + 22
    floors = [_floor(s) for s in rows]
    spread = []
    for s, f in zip(rows, floors):
        spread += _finite(s.get("value"), s.get("ci_low"), s.get("ci_high"), *bounds(s.get("threshold")), *(f or ()))
    low, high = (min(spread), max(spread)) if spread else (0.0, 1.0)
    # controls widen the axis by at most its own width each side; farther ones sit at the edge
    reach = (high - low) or abs(high) or 1.0
    near = [v for row in controls for _, v, _ in row if low - reach <= v <= high + reach]
    low, high = min([low, *near]), max([high, *near])
    pad = (high - low) * 0.06 or abs(high) * 0.1 or 1.0
    low, high = low - pad, high + pad

    def x(v: float) -> float:
        return round(label_w + (v - low) / (high - low) * plot_w, 1)

    svg = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{label_w + plot_w + 12}' height='{height}' "
           f"font-size='10' font-family='sans-serif' role='img' aria-label='{e(metric)}'>"]
    for tick in _ticks(low, high):
        svg.append(f"<line x1='{x(tick)}' x2='{x(tick)}' y1='{top - 4}' y2='{height - 18}' stroke='#eee'/>"
                   f"<text x='{x(tick)}' y='{height - 6}' text-anchor='middle' fill='#666'>{tick:g}</text>")
    for i, (s, f, row_controls) in enumerate(zip(rows, floors, controls)):
        y = top + i * row_h + row_h / 2
        colour = COLOURS[verdict_category(s)][0]
        task = str(s["task"])
        svg.append(f"<text x='{label_w - 4}' y='{y + 3.5}' text-anchor='end' fill='#333'>{e(task[:26])}</text>")
        if f:
            svg.append(f"<rect x='{x(f[0])}' y='{y - 4}' width='{max(x(f[1]) - x(f[0]), 1)}' height='8' fill='#cfd8dc'/>"
                       f"<path d='M{x(f[2])},{y - 4}l4,4l-4,4l-4,-4z' fill='#78909c'><title>floor {f[2]:.4g}</title></path>")
        for name, value, sign in row_controls:
            apex, step = (y - 9, 4) if sign == "+" else (y + 9, -4)  # ▲ just above the row, ▼ just below it
            shown = min(max(value, low), high)
            off = " (off the scale)" if shown != value else ""
            dashes = " stroke-dasharray='1,1'" if off else ""
            svg.append(f"<path d='M{x(shown)},{apex}l-3,{step}h6z' fill='none' "
                       f"stroke='{CONTROL_COLOURS[sign]}' stroke-width='1'{dashes}>"
                       f"<title>{e(name)} (expected to {'pass' if sign == '+' else 'fail'}): {value:.4g}{off}</title></path>")
        for bound in bounds(s.get("threshold")):
            svg.append(f"<line x1='{x(bound)}' x2='{x(bound)}' y1='{y - 6}' y2='{y + 6}' stroke='#333' stroke-width='2'/>")
        low_ci, high_ci = _finite(s.get("ci_low")), _finite(s.get("ci_high"))
        if low_ci and high_ci:
            svg.append(f"<line x1='{x(low_ci[0])}' x2='{x(high_ci[0])}' y1='{y}' y2='{y}' stroke='{colour}' stroke-width='2'/>")
        tip = e(f"{task}: {format_value(s)}, bar {s.get('threshold') or '-'}, {CATEGORY_NAMES[verdict_category(s)]}")
        if _finite(s.get("value")):
            svg.append(f"<circle cx='{x(s['value'])}' cy='{y}' r='3.5' fill='{colour}'><title>{tip}</title></circle>")
        else:
            svg.append(f"<text x='{label_w + 4}' y='{y + 3.5}' fill='{colour}'>no value<title>{tip}</title></text>")
    svg.append("</svg>")
    thresholds = list(dict.fromkeys(str(s.get("threshold")) for s in rows if s.get("threshold")))
    bar = e(thresholds[0]) if len(thresholds) == 1 else ("bar per task" if thresholds else "no bar")
    return f"<div class='chart'><h4>{_metric_link(metric)} <span>{bar}</span></h4>{''.join(svg)}</div>"


def _ticks(low: float, high: float) -> list[float]:
    step = 10 ** math.floor(math.log10((high - low) / 3))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 5:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step) + 1)]


def _domain_bar_lines(scorecard: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """(label, text) of each domain's own bar on card ``key`` (its variants too), from the scorecard."""
    from cfcheck.metrics.cards import CARDS

    lines = []
    for domain, facts in sorted(((scorecard.get("profile") or {}).get("domains") or {}).items()):
        if not isinstance(facts, dict) or facts.get("bars") not in ("calibrated", "uncalibrated", "cards"):
            continue
        own = {k: v for k, v in (facts.get("domain_bars") or {}).items()
               if k == key or (k not in CARDS and k.startswith(f"{key}_"))}  # a variant, not another card
        if not own and facts["bars"] != "cards":  # a bundled domain lists only the bars it adds to the cards'
            lines.append((f"bar on {domain}", "none: the domain is uncalibrated (cfcheck calibrate --domain)"
                          if facts["bars"] == "uncalibrated" else "none: its controls did not separate"))
        lines += [(f"bar on {domain}" + (f" ({k})" if k != key else ""), f"{v['bar']}: {v['rationale']}")
                  for k, v in sorted(own.items())]
    return lines


def _cards(scores: Sequence[dict[str, Any]], scorecard: dict[str, Any] | None = None) -> str:
    from cfcheck.reporting.card_evidence import scorecard_evidence
    from cfcheck.metrics.cards import CARDS

    keys = list(dict.fromkeys(MetricKey.parse(str(s["metric"])).card for s in scores))
    out = ["<h2>Metric cards</h2><p class='muted'>What each score measures, its bar and why the bar sits there.</p>"]
    for key in [k for k in keys if k in CARDS]:
        card = CARDS[key]
        bar = card.bar.describe() if card.bar is not None else "none (reported without a verdict)"
        bar += "".join(f"; {name} profile: {b.describe()}" for name, b in card.profile_bars.items())
        fields = [("formula", card.formula), ("direction", f"{card.direction} is better" if card.direction != "none" else "none"),
                  ("range", f"[{card.range[0]:g}, {card.range[1]:g}] {card.units}"), ("normalisation", card.normalisation),
                  ("abstentions", card.abstentions), ("bar (bundled domains)", bar),
                  ("rationale", card.rationale or "-"), *scorecard_evidence(scorecard or {}, key),
                  *_domain_bar_lines(scorecard or {}, key),
                  ("citation", card.citation), ("notes", card.notes or "-")]
        items = "".join(f"<dt>{e(name)}</dt><dd>{e(value)}</dd>" for name, value in fields)
        out.append(f"<details class='card' id='{card_anchor(key)}'><summary><b>{e(card.name)}</b> "
                   f"<code>{e(key)}</code></summary><dl>{items}</dl></details>")
    return "\n".join(out)


def _provenance(scorecard: dict[str, Any]) -> str:
    prov = dict(scorecard.get("provenance", {}))
    models = prov.pop("reference_models", {}) or {}
    generation = prov.pop("generation", {}) or {}
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in prov.items())
    rows += "".join(f"<tr><th>model {e(k)}</th><td><code>{e(str(v)[:16])}…</code></td></tr>" for k, v in sorted(models.items()))
    gen = e(json.dumps(generation, indent=1, sort_keys=True, default=str))
    costs = e(json.dumps(scorecard.get("costs", {}), indent=1, sort_keys=True, default=str))
    return (f"<h2>Provenance</h2><table class='provenance'>{rows}</table><details><summary>generation</summary>"
            f"<pre>{gen}</pre></details><details><summary>costs</summary><pre>{costs}</pre></details>")


def _all_scores(scorecard: dict[str, Any]) -> str:
    rows = score_rows(scorecard)
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join(
        f"<tr class='v-{verdict_category(score)}'>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
        for row, score in zip(rows, scorecard["scores"])
    )
    return (f"<h2>All scores</h2><details class='all'><summary>all {len(rows)} scores</summary>"
            f"<table><tr>{head}</tr>{body}</table></details>")
