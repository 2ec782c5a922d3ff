"""The scorecard page's charts: per metric, each task's value and 95% CI against its bar, the
real-vs-real floor and what the controls reached on the same score (the scorecard's ``calibration``
section, :mod:`cfcheck.reporting.calibration_section`), as inline SVG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cfcheck.reporting.calibration_section import Marker
from cfcheck.reporting.html_blocks import COLOURS, chips, e, metric_link
from cfcheck.reporting.model import Score, Scorecard
from cfcheck.reporting.tables import CATEGORY_NAMES

__all__ = ["CONTROL_COLOURS", "NO_CALIBRATION", "charts_section"]

#: what the charts say of a scorecard written before cfcheck recorded the controls' values in it
NO_CALIBRATION = (
    "This scorecard was written before cfcheck recorded the controls' calibration values in it: its charts "
    "draw no control markers and its metric cards quote no measured values (`cfcheck render --recalibrate "
    "RUN_DIR` adds them from this machine's domains)."
)


def charts_section(card: Scorecard) -> str:
    """Per (kind, suite), one chart per metric; folded unless the suite has a failing score."""
    drawn = any(_markers(card, s) for s in card.scores)
    out = [
        "<h2>Scores per metric</h2><p class='muted'>Per task: ● value (coloured by verdict) with its 95% CI; "
        "<span style='color:#333'>┃</span> the bar; <span style='color:#78909c'>◆</span> the real-vs-real floor "
        "(highest draw, band: all draws)"
        + (
            "; what the bundled controls reached on the same score (hover for the name): "
            f"<span style='color:{CONTROL_COLOURS['+']}'>▲</span> a control expected to pass this suite, "
            f"<span style='color:{CONTROL_COLOURS['-']}'>▼</span> one expected to fail it (dotted at the edge: "
            "off the scale)"
            if drawn
            else ""
        )
        + ".</p>"
    ]
    if card.calibration is None:
        out.append(f"<p class='muted no-calibration'>{e(NO_CALIBRATION)}</p>")
    for (kind, suite), group in card.scores.by_kind_suite().items():
        charts = [
            _chart(metric, rows.scores, [_markers(card, s) for s in rows]) for metric, rows in group.by_metric().items()
        ]
        out.append(
            f"<details{' open' if group.any_failing else ''}><summary><b>{e(kind)}/{e(suite)}</b> "
            f"{chips(group.counts)}</summary><div class='charts'>{''.join(charts)}</div></details>"
        )
    return "\n".join(out)


#: Marker colours of controls expected to pass (+) and to fail (−) a suite.
CONTROL_COLOURS = {"+": "#2e7d32", "-": "#c62828"}


def _markers(card: Scorecard, score: Score) -> tuple[Marker, ...]:
    """The controls' markers of ``score`` from its section's calibration (none without one, or for a score
    whose names make no identity: calibration values are keyed by identities)."""
    entry = (card.calibration or {}).get((score.kind, score.domain))
    return entry.markers_of(score.identity) if entry is not None else ()


def bounds(score: Score) -> list[float]:
    """Where the score's bar is drawn: the bound it was held to, read from its recorded bar (``bar`` in the
    scorecard, :class:`~cfcheck.core.thresholds.RecordedBar`); none for a score without a bar, a
    floor-relative bar without its floor, or a scorecard written before bars were data (its text is shown,
    not drawn)."""
    bound = score.bar_bound
    return [bound] if bound is not None else []


def _floor(score: Score) -> tuple[float, float, float] | None:
    """(lowest, highest, bar's) floor draw of ``extra.real_floor`` (one number or a list)."""
    draws = score.extra.get("real_floor")
    draws = draws if isinstance(draws, list) else [draws]
    draws = [float(d) for d in draws if isinstance(d, (int, float)) and math.isfinite(d)]
    return (min(draws), max(draws), max(draws)) if draws else None


def _finite(*values: Any) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]


def _chart(metric: str, rows: Sequence[Score], controls: Sequence[Sequence[Marker]]) -> str:
    label_w, plot_w, top = 150, 210, 16
    row_h = 20 if any(controls) else 14  # room for the control markers above and below a row
    height = top + row_h * len(rows) + 22
    floors = [_floor(s) for s in rows]
    spread = []
    for s, f in zip(rows, floors):
        spread += _finite(s.value, s.ci_low, s.ci_high, *bounds(s), *(f or ()))
    low, high = (min(spread), max(spread)) if spread else (0.0, 1.0)
    # controls widen the axis by at most its own width each side; farther ones sit at the edge
    reach = (high - low) or abs(high) or 1.0
    near = [m.value for row in controls for m in row if low - reach <= m.value <= high + reach]
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
        colour = COLOURS[s.category][0]
        task = s.task
        svg.append(f"<text x='{label_w - 4}' y='{y + 3.5}' text-anchor='end' fill='#333'>{e(task[:26])}</text>")
        if f:
            svg.append(
                f"<rect x='{x(f[0])}' y='{y - 4}' width='{max(x(f[1]) - x(f[0]), 1)}' height='8' fill='#cfd8dc'/>"
                f"<path d='M{x(f[2])},{y - 4}l4,4l-4,4l-4,-4z' fill='#78909c'><title>floor {f[2]:.4g}</title></path>"
            )
        for name, value, sign in ((m.control, m.value, m.expected) for m in row_controls):
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
        low_ci, high_ci = _finite(s.ci_low), _finite(s.ci_high)
        if low_ci and high_ci:
            svg.append(
                f"<line x1='{x(low_ci[0])}' x2='{x(high_ci[0])}' y1='{y}' y2='{y}' stroke='{colour}' stroke-width='2'/>"
            )
        tip = e(f"{task}: {s.value_text}, bar {s.threshold or '-'}, {CATEGORY_NAMES[s.category]}")
        if (point := s.finite_value) is not None:
            svg.append(f"<circle cx='{x(point)}' cy='{y}' r='3.5' fill='{colour}'><title>{tip}</title></circle>")
        else:
            svg.append(f"<text x='{label_w + 4}' y='{y + 3.5}' fill='{colour}'>no value<title>{tip}</title></text>")
    svg.append("</svg>")
    thresholds = list(dict.fromkeys(str(s.threshold) for s in rows if s.threshold))
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
