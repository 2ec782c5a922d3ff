"""A score keeps the bar it was judged against as data (:class:`RecordedBar`: direction, bound, floor rule,
the run's floor); the text pages show is derived from it and is the text runs wrote before bars were data,
for every bar of the bundled cards; scorecards written before (text only) still load."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import cfcheck
from cfcheck.calibration.bars import read_bars_file
from cfcheck.core.records import ScoreRecord
from cfcheck.core.thresholds import Bar, RecordedBar
from cfcheck.metrics.cards import CARDS
from cfcheck.profiles import PROFILE_NAMES

#: floors a floor-relative bar may be resolved with: none, a run's typical ones and awkward magnitudes
FLOORS = (None, math.nan, 0.4052083333333333, 9.61, 0.1234567, 1e-5, 12345.678, 3.0)


def _text_before_bars_were_data(bar: Bar, floor: float | None) -> str:
    """What the recorder wrote as ``threshold`` before the record kept the bar (``bar.describe(floor)`` as it
    was then), frozen here: a change of the page's text fails this test."""
    sign = ">=" if bar.kind == "min" else "<="
    if bar.relative == "absolute":
        return f"{sign} {bar.bound:g}"
    rule = f"{bar.bound:g} × floor" if bar.relative == "times_floor" else f"floor + {bar.bound:g}"
    if floor is not None and math.isfinite(floor):
        resolved = bar.bound * floor if bar.relative == "times_floor" else floor + bar.bound
        return f"{sign} {rule} = {resolved:.4g}"
    return f"{sign} {rule}"


def _bundled_bars() -> list[Bar]:
    """Every bar of the cards at every profile, and of the bundled domains' and the example's bars files."""
    bars = {bar for card in CARDS.values() for profile in PROFILE_NAMES if (bar := card.bar_for(profile)) is not None}
    root = Path(cfcheck.__file__).resolve().parent.parent
    for path in (*root.glob("cfcheck/domains/*/bars-*.json"), *root.glob("examples/*/bars-*.json")):
        bars.update(read_bars_file(path, cards=CARDS)[0].values())
    return sorted(bars, key=lambda bar: (bar.kind, bar.relative, bar.bound))


def test_the_bundled_cards_have_bars_of_every_rule() -> None:
    assert {bar.relative for bar in _bundled_bars()} == {"absolute", "times_floor", "plus_floor"}
    assert {bar.kind for bar in _bundled_bars()} == {"min", "max"} and len(_bundled_bars()) > 30
    assert {bar.bound for bar in _bundled_bars()} != {round(bar.bound, 2) for bar in _bundled_bars()}  # long ones


@pytest.mark.parametrize("floor", FLOORS)
def test_every_bundled_bar_reads_as_before_through_the_scorecard(floor: float | None) -> None:
    for bar in _bundled_bars():
        recorded = RecordedBar.of(bar, floor)
        stored = RecordedBar.from_dict(json.loads(json.dumps(recorded.to_dict())))  # as a scorecard keeps it
        assert stored == recorded and stored.bar == bar
        assert stored.describe() == _text_before_bars_were_data(bar, floor), (bar, floor)
        record = ScoreRecord("n", "s", "m", "t", 0.5, 3, "higher", bar=recorded)
        assert ScoreRecord.from_dict(json.loads(json.dumps(record.to_dict()))).threshold == record.threshold
        assert record.threshold == _text_before_bars_were_data(bar, floor)


@pytest.mark.parametrize("floor", FLOORS)
def test_the_value_is_the_bound_the_score_was_held_to_and_the_one_the_text_shows(floor: float | None) -> None:
    for bar in _bundled_bars():
        recorded = RecordedBar.of(bar, floor)
        finite_floor = floor is not None and math.isfinite(floor)
        if bar.relative == "absolute":
            assert recorded.value == bar.bound and recorded.floor is None  # an absolute bar keeps no floor
        elif not finite_floor:
            assert recorded.value is None and recorded.floor is None
        else:
            expected = bar.bound * floor if bar.relative == "times_floor" else floor + bar.bound
            assert recorded.value == pytest.approx(expected, rel=1e-15) and recorded.floor == floor
            assert bar.passes(recorded.value, floor)  # the bound itself is on the passing side
            shown = float(recorded.describe().rsplit("= ", 1)[1])
            assert shown == pytest.approx(recorded.value, rel=5e-4)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"bound": 0.8}, "an object with 'kind'"),
        ("<= 0.8", "an object with 'kind'"),
        ({"kind": "above", "bound": 0.8}, "bar kind must be 'min' or 'max'"),
        ({"kind": "min", "bound": "0.8"}, "bound must be a finite number"),
        ({"kind": "min", "bound": 0.8, "relative": "times_mean"}, "bar relative must be"),
        ({"kind": "min", "bound": 0.5, "relative": "times_floor", "floor": "x"}, "floor must be a finite number"),
        ({"kind": "min", "bound": 0.8, "floor": 2.0}, "an absolute bar \\(>= 0.8\\) is not resolved with a floor"),
    ],
)
def test_a_malformed_recorded_bar_is_refused_naming_what_was_expected(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RecordedBar.from_dict(data)  # type: ignore[arg-type]


def test_a_record_derives_its_text_and_a_scorecard_before_bars_were_data_keeps_its_text() -> None:
    recorded = RecordedBar.of(Bar(2.0, "max", "times_floor"), 9.61)
    record = ScoreRecord("n", "realism", "fid_target", "t", 28.0, 10, "lower", threshold="stale", bar=recorded)
    assert record.threshold == "<= 2 × floor = 19.22"  # derived from the bar, whatever was passed
    data = record.to_dict()
    assert data["bar"] == {"kind": "max", "bound": 2.0, "relative": "times_floor", "floor": 9.61, "value": 19.22}
    assert data["threshold"] == "<= 2 × floor = 19.22"  # the text stays in the JSON for pages and readers
    old = {k: v for k, v in data.items() if k != "bar"}  # format 3 as written before bars were data
    read = ScoreRecord.from_dict(old)
    assert read.bar is None and read.threshold == "<= 2 × floor = 19.22"
    assert ScoreRecord.from_dict(data).bar == recorded
    none = ScoreRecord.from_dict({**old, "threshold": None})
    assert none.to_dict()["bar"] is None and none.threshold is None
