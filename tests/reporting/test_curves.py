"""Recorded curves in the HTML and Markdown scorecards: one polyline per series, escaped labels,
nothing for records without a curve."""

from __future__ import annotations

import re

from cfcheck.reporting.curves import curve_section, curve_svg, curve_table

CURVE = {"levels": [0.0, 0.5, 1.0], "method": [1.0, 0.6, 0.2], "random": [1.0, 0.9, 0.8]}


def _score(**extra):
    return {"metric": "roar_area:morf", "domain": "gmm", "task": "<b>mlp</b>", "extra": extra}


def test_one_polyline_per_series_at_the_right_heights():
    svg = curve_svg("t", CURVE, width=230, height=140)
    points = re.findall(r"<polyline points='([^']+)'", svg)
    assert len(points) == 2
    # y = top + (1 − v)·(height − top − bottom) with top 18, bottom 22: v = 1 → 18, v = 0.2 → 98
    first = [tuple(map(float, p.split(","))) for p in points[0].split()]
    assert [y for _, y in first] == [18.0, 58.0, 98.0]
    assert [x for x, _ in first] == [30.0, 126.0, 222.0]  # left 30 .. width − right 8


def test_labels_are_escaped_and_records_without_curves_draw_nothing():
    section = curve_section([_score(curve=CURVE), _score()])
    assert "&lt;b&gt;mlp&lt;/b&gt;" in section and "<b>mlp</b>" not in section
    assert section.count("<svg") == 1
    assert curve_section([_score(), _score(curve={"levels": [1.0]})]) == ""


def test_markdown_table_lists_every_series():
    table = curve_table([_score(curve=CURVE)])
    assert "| roar_area:morf | gmm &lt;b>mlp&lt;/b> | method | 0, 0.5, 1 | 1.000, 0.600, 0.200 |" in table
    assert "| random |" in table
    assert curve_table([_score()]) == ""
