"""The scorecard page's charts: per metric, each task's value and 95% CI against its bar, the
real-vs-real floor and, where calibration values are given, what the controls reached (inline SVG)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cfcheck.core.keys import ScoreId
from cfcheck.core.thresholds import RecordedBar
from cfcheck.reporting.html_blocks import COLOURS, chips, e, metric_link
from cfcheck.reporting.tables import (
    CATEGORY_NAMES,
    count_verdicts,
    format_value,
    group_scores,
    is_failing,
    suite_key,
    verdict_category,
)

#: Score identity key → control name → {"value": float, "expected": "+" | "-" | ""}.
Calibration = dict[str, dict[str, dict[str, Any]]]


def charts_section(scores: Sequence[dict[str, Any]], calibration: Calibration | None) -> str:
    out = [
        "<h2>Scores per metric</h2><p class='muted'>Per task: ● value (coloured by verdict) with its 95% CI; "
        "<span style='color:#333'>┃</span> the bar; <span style='color:#78909c'>◆</span> the real-vs-real floor "
        "(highest draw, band: all draws)"
        + (
            "; what the bundled controls reached on the same score (hover for the name): "
            f"<span style='color:{CONTROL_COLOURS['+']}'>▲</span> a control expected to pass this suite, "
            f"<span style='color:{CONTROL_COLOURS['-']}'>▼</span> one expected to fail it (dotted at the edge: "
            "off the scale)"
            if calibration
            else ""
        )
        + ".</p>"
    ]
    for (kind, suite), group in group_scores(scores, suite_key).items():
        failing = any(is_failing(s) for s in group)
        charts = [
            _chart(metric, rows, [_controls(s, calibration) for s in rows])
            for metric, rows in group_scores(group, lambda s: s["metric"]).items()
        ]
        out.append(
            f"<details{' open' if failing else ''}><summary><b>{e(kind)}/{e(suite)}</b> "
            f"{chips(count_verdicts(group))}</summary><div class='charts'>{''.join(charts)}</div></details>"
        )
    return "\n".join(out)


#: Marker colours of controls expected to pass (+) and to fail (−) a suite.
CONTROL_COLOURS = {"+": "#2e7d32", "-": "#c62828"}


def _controls(score: dict[str, Any], calibration: Calibration | None) -> list[tuple[str, float, str]]:
    """(control, value, expected sign) of the controls with a sign for this score's suite (none for a score
    whose names make no identity: calibration values are keyed by identities)."""
    if not calibration:
        return []
    try:
        key = ScoreId.from_score(score).serialise()
    except ValueError:
        return []
    found = []
    for name, entry in sorted(calibration.get(key, {}).items()):
        value, sign = entry.get("value"), entry.get("expected", "")
        if sign in CONTROL_COLOURS and _finite(value):
            found.append((name, _finite(value)[0], sign))
    return found


def bounds(score: dict[str, Any]) -> list[float]:
    """Where the score's bar is drawn: the bound it was held to, read from its recorded bar (``bar`` in the
    scorecard, :class:`~cfcheck.core.thresholds.RecordedBar`); none for a score without a bar, a
    floor-relative bar without its floor, or a scorecard written before bars were data (its text is shown,
    not drawn)."""
    data = score.get("bar")
    if not isinstance(data, dict):
        return []
    try:
        value = RecordedBar.from_dict(data).value
    except ValueError:
        return []
    return _finite(value)


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
        spread += _finite(s.get("value"), s.get("ci_low"), s.get("ci_high"), *bounds(s), *(f or ()))
    low, high = (min(spread), max(spread)) if spread else (0.0, 1.0)
    # controls widen the axis by at most its own width each side; farther ones sit at the edge
    reach = (high - low) or abs(high) or 1.0
    near = [v for row in controls for _, v, _ in row if low - reach <= v <= high + reach]
    low, high = min([low, *near]), max([high, *near])
    pad = (high - low) * 0.06 or abs(high) * 0.1 or 1.0
    low, high = low - pad, high + pad

    def x(v: float) -> float:
        return round(label_w + (v - low) / (high - low) * plot_w, 1)

    svg = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{label_w + plot_w + 12}' height='{height}' "
        f"font-size='10' font-family='sans-serif' role='img' aria-label='{e(metric)}'>"
    ]
    for tick in _ticks(low, high):
        svg.append(
            f"<line x1='{x(tick)}' x2='{x(tick)}' y1='{top - 4}' y2='{height - 18}' stroke='#eee'/>"
            f"<text x='{x(tick)}' y='{height - 6}' text-anchor='middle' fill='#666'>{tick:g}</text>"
        )
    for i, (s, f, row_controls) in enumerate(zip(rows, floors, controls)):
        y = top + i * row_h + row_h / 2
        colour = COLOURS[verdict_category(s)][0]
        task = str(s["task"])
        svg.append(f"<text x='{label_w - 4}' y='{y + 3.5}' text-anchor='end' fill='#333'>{e(task[:26])}</text>")
        if f:
            svg.append(
                f"<rect x='{x(f[0])}' y='{y - 4}' width='{max(x(f[1]) - x(f[0]), 1)}' height='8' fill='#cfd8dc'/>"
                f"<path d='M{x(f[2])},{y - 4}l4,4l-4,4l-4,-4z' fill='#78909c'><title>floor {f[2]:.4g}</title></path>"
            )
        for name, value, sign in row_controls:
            apex, step = (y - 9, 4) if sign == "+" else (y + 9, -4)  # ▲ just above the row, ▼ just below it
            shown = min(max(value, low), high)
            off = " (off the scale)" if shown != value else ""
            dashes = " stroke-dasharray='1,1'" if off else ""
            svg.append(
                f"<path d='M{x(shown)},{apex}l-3,{step}h6z' fill='none' "
                f"stroke='{CONTROL_COLOURS[sign]}' stroke-width='1'{dashes}>"
                f"<title>{e(name)} (expected to {'pass' if sign == '+' else 'fail'}): {value:.4g}{off}</title></path>"
            )
        for bound in bounds(s):
            svg.append(
                f"<line x1='{x(bound)}' x2='{x(bound)}' y1='{y - 6}' y2='{y + 6}' stroke='#333' stroke-width='2'/>"
            )
        low_ci, high_ci = _finite(s.get("ci_low")), _finite(s.get("ci_high"))
        if low_ci and high_ci:
            svg.append(
                f"<line x1='{x(low_ci[0])}' x2='{x(high_ci[0])}' y1='{y}' y2='{y}' stroke='{colour}' stroke-width='2'/>"
            )
        tip = e(f"{task}: {format_value(s)}, bar {s.get('threshold') or '-'}, {CATEGORY_NAMES[verdict_category(s)]}")
        if _finite(s.get("value")):
            svg.append(f"<circle cx='{x(s['value'])}' cy='{y}' r='3.5' fill='{colour}'><title>{tip}</title></circle>")
        else:
            svg.append(f"<text x='{label_w + 4}' y='{y + 3.5}' fill='{colour}'>no value<title>{tip}</title></text>")
    svg.append("</svg>")
    thresholds = list(dict.fromkeys(str(s.get("threshold")) for s in rows if s.get("threshold")))
    bar = e(thresholds[0]) if len(thresholds) == 1 else ("bar per task" if thresholds else "no bar")
    return f"<div class='chart'><h4>{metric_link(metric)} <span>{bar}</span></h4>{''.join(svg)}</div>"


def _ticks(low: float, high: float) -> list[float]:
    step = 10 ** math.floor(math.log10((high - low) / 3))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 5:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step) + 1)]
