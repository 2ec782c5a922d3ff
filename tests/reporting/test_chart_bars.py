"""The scorecard's charts draw each score's bar where its recorded bar says (``bar.value``, data), read back
here from the SVG against the chart's own axis; a score whose bar is text only (a scorecard written
before bars were data) or unresolved shows its text and draws no line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from cfcheck.core.thresholds import Bar, RecordedBar
from cfcheck.reporting.html_charts import charts_section
from cfcheck.reporting.model import Scorecard

SVG = "{http://www.w3.org/2000/svg}"


def _score(task: str, value: float, bar: RecordedBar | None, threshold: str | None = None) -> dict:
    return {
        "kind": "vce",
        "domain": "morpho",
        "suite": "realism",
        "metric": "fid_target",
        "task": task,
        "value": value,
        "ci_low": value - 0.5,
        "ci_high": value + 0.5,
        "n": 20,
        "direction": "lower",
        "verdict": "pass" if bar is None or bar.value is None or value <= bar.value else "fail",
        "threshold": bar.describe() if bar is not None else threshold,
        **({"bar": bar.to_dict()} if bar is not None else {}),
        "extra": {},
    }


def _charts(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in re.findall(r"<svg xmlns='http://www.w3.org/2000/svg'.*?</svg>", page, re.S)]


def _axis(svg: ET.Element) -> tuple[float, float]:
    """(value per pixel, value at x = 0) from the chart's ticks: their lines' x and their labels."""
    ticks = []
    for text in svg.iter(f"{SVG}text"):
        if text.get("text-anchor") == "middle":
            ticks.append((float(text.get("x", "nan")), float(text.text or "nan")))
    (x0, v0), (x1, v1) = ticks[0], ticks[-1]
    assert len(ticks) >= 2 and x1 > x0
    scale = (v1 - v0) / (x1 - x0)
    return scale, v0 - x0 * scale


def _bar_lines(svg: ET.Element) -> dict[str, float]:
    """Task label → x of the bar line drawn on its row (the bar: dark, 2 px wide)."""
    rows = {float(t.get("y", "nan")) - 3.5: t.text for t in svg.iter(f"{SVG}text") if t.get("text-anchor") == "end"}
    found = {}
    for line in svg.iter(f"{SVG}line"):
        if line.get("stroke") == "#333" and line.get("stroke-width") == "2":
            assert line.get("x1") == line.get("x2")
            found[str(rows[float(line.get("y1", "nan")) + 6])] = float(line.get("x1", "nan"))
    return found


@pytest.mark.parametrize("floor", [0.3, 7.25])
def test_each_row_draws_its_bar_at_the_recorded_value(floor: float) -> None:
    scores = [
        _score("absolute", 3.0, RecordedBar.of(Bar(4.0, "max"))),
        _score("times_floor", 1.0, RecordedBar.of(Bar(2.0, "max", "times_floor"), floor)),
        _score("plus_floor", 2.5, RecordedBar.of(Bar(1.5, "max", "plus_floor"), floor)),
        _score("unresolved", 2.0, RecordedBar.of(Bar(2.0, "max", "times_floor"))),  # an error record's: no floor
        _score("text_only", 2.0, None, threshold="<= 9.5"),  # written before bars were data
    ]
    page = charts_section(Scorecard.from_json({"scores": scores, "calibration": {}}))
    (chart,) = _charts(page)
    scale, offset = _axis(chart)
    drawn = _bar_lines(chart)
    expected = {"absolute": 4.0, "times_floor": 2.0 * floor, "plus_floor": floor + 1.5}
    assert set(drawn) == set(expected)  # none for the unresolved bar, none for the text-only one
    for task, value in expected.items():
        assert drawn[task] * scale + offset == pytest.approx(value, abs=abs(scale) * 0.3), task
    assert "&lt;= 9.5" in page and "&lt;= 2 × floor" in page  # their text is still shown
    assert "bar per task" in page


def test_the_axis_reaches_a_bar_beyond_every_value() -> None:
    """A bar far from the values still lies on the chart (the axis spans it)."""
    scores = [
        _score("far", 1.0, RecordedBar.of(Bar(40.0, "max"))),
        _score("near", 2.0, RecordedBar.of(Bar(3.0, "max"))),
    ]
    page = charts_section(Scorecard.from_json({"scores": scores, "calibration": {}}))
    (chart,) = _charts(page)
    scale, offset = _axis(chart)
    drawn = _bar_lines(chart)
    assert drawn["far"] * scale + offset == pytest.approx(40.0, abs=abs(scale) * 0.3)
    assert drawn["near"] * scale + offset == pytest.approx(3.0, abs=abs(scale) * 0.3)
    assert 150 <= drawn["near"] < drawn["far"] <= 150 + 210  # inside the plot area
