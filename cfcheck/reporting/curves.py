"""Curves recorded with a score (``extra["curve"]``: ``levels`` and one height list per series,
e.g. the removal benchmarks' method and random-attribution curves), drawn as inline SVG.

Every label is escaped; a record without a curve draws nothing.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["curve_section", "curve_svg", "curve_table"]

#: series name → stroke colour (others cycle through the rest)
SERIES_COLOURS = {"method": "#1565c0", "random": "#9e9e9e"}
_OTHERS = ("#6a1b9a", "#ef6c00", "#2e7d32", "#c62828")


def _curve(score: Mapping[str, Any]) -> dict[str, Any] | None:
    curve = (score.get("extra") or {}).get("curve")
    if not isinstance(curve, dict) or not isinstance(curve.get("levels"), list) or len(curve["levels"]) < 2:
        return None
    return curve


def _series(curve: dict[str, Any]) -> list[tuple[str, list[float]]]:
    levels = curve["levels"]
    return [
        (name, values)
        for name, values in curve.items()
        if name != "levels" and isinstance(values, list) and len(values) == len(levels)
    ]


def curve_svg(title: str, curve: dict[str, Any], width: int = 260, height: int = 150) -> str:
    """One line chart: x = the levels, y in [0, 1] (clipped), one polyline per series."""
    e = html.escape
    left, right, top, bottom = 30, 8, 18, 22
    levels = [float(v) for v in curve["levels"]]
    lo, hi = min(levels), max(levels)
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return round(left + (v - lo) / span * (width - left - right), 1)

    def y(v: float) -> float:
        v = min(max(v, 0.0), 1.0) if math.isfinite(v) else 0.0
        return round(top + (1 - v) * (height - top - bottom), 1)

    svg = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-size='9' "
        f"font-family='sans-serif' role='img' aria-label='{e(title)}'>",
        f"<text x='{left}' y='11' fill='#333'>{e(title[:48])}</text>",
    ]
    for tick in (0.0, 0.5, 1.0):
        svg.append(
            f"<line x1='{left}' x2='{width - right}' y1='{y(tick)}' y2='{y(tick)}' stroke='#eee'/>"
            f"<text x='{left - 3}' y='{y(tick) + 3}' text-anchor='end' fill='#666'>{tick:g}</text>"
        )
    for level in levels:
        svg.append(f"<text x='{x(level)}' y='{height - 8}' text-anchor='middle' fill='#666'>{level:g}</text>")
    for i, (name, values) in enumerate(_series(curve)):
        colour = SERIES_COLOURS.get(name, _OTHERS[i % len(_OTHERS)])
        points = " ".join(f"{x(float(lv))},{y(float(v))}" for lv, v in zip(levels, values))
        svg.append(
            f"<polyline points='{points}' fill='none' stroke='{colour}' stroke-width='1.5'>"
            f"<title>{e(name)}: {', '.join(f'{float(v):.3g}' for v in values)}</title></polyline>"
        )
        svg.append(
            f"<text x='{width - right}' y='{top + 10 * (i + 1)}' text-anchor='end' fill='{colour}'>{e(name)}</text>"
        )
    svg.append("</svg>")
    return "".join(svg)


def curve_section(scores: Sequence[Mapping[str, Any]]) -> str:
    """The HTML section of every recorded curve ("" when there is none)."""
    charts = [
        curve_svg(f"{s['metric']} · {s.get('domain', '')} {s['task']}", curve)
        for s in scores
        if (curve := _curve(s)) is not None
    ]
    if not charts:
        return ""
    return (
        "<h2>Curves</h2><p class='muted'>Per removal score: the mean outcome per level for the method and for "
        "cfcheck's seeded random attribution on the same inputs (ROAR/ROAD: accuracy; GOAR: cumulative "
        "misclassification).</p><div class='charts'>"
        + "".join(f"<div class='chart'>{chart}</div>" for chart in charts)
        + "</div>"
    )


def curve_table(scores: Sequence[Mapping[str, Any]]) -> str:
    """The Markdown version: one row per curve and series, the heights per level."""
    rows = []
    for s in scores:
        curve = _curve(s)
        if curve is None:
            continue
        levels = ", ".join(f"{float(v):g}" for v in curve["levels"])
        for name, values in _series(curve):
            heights = ", ".join(f"{float(v):.3f}" for v in values)
            rows.append(f"| {s['metric']} | {s.get('domain', '')} {s['task']} | {name} | {levels} | {heights} |")
    if not rows:
        return ""
    return "\n".join(
        [
            "## Curves",
            "",
            "| metric | task | series | levels | mean outcome per level |",
            "|---|---|---|---|---|",
            *(r.replace("<", "&lt;") for r in rows),
            "",
        ]
    )
