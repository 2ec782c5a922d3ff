"""cfcheck.core.thresholds: one Bar for metric cards and model quality bars."""

from __future__ import annotations

import pytest

from cfcheck.core.thresholds import Bar, Bars, bar_violations, parse_bars


def test_metric_cards_reexport_the_same_bar():
    from cfcheck.metrics import cards

    assert cards.Bar is Bar


def test_manifest_dicts_parse_into_bars_and_back():
    both = Bars.from_dict({"max": 0.9, "min": 0.1})
    assert both.bars == (Bar(0.1, "min"), Bar(0.9, "max"))
    assert both.to_dict() == {"min": 0.1, "max": 0.9}
    assert both.describe() == ">= 0.1 and <= 0.9"
    assert both.passes(0.5) and not both.passes(0.95)
    assert both.failed(0.05) == [Bar(0.1, "min")]
    assert parse_bars({"acc": {"min": 0.97}}) == {"acc": Bars((Bar(0.97, "min"),))}


@pytest.mark.parametrize(
    ("bounds", "match"),
    [
        ({}, "'min' and/or 'max'"),
        ({"minimum": 1}, "only 'min' and 'max'"),
        ({"min": "0.9"}, "must be a number"),
        ({"max": True}, "must be a number"),
    ],
)
def test_malformed_bars_are_rejected(bounds, match):
    with pytest.raises(ValueError, match=match):
        Bars.from_dict(bounds)
    with pytest.raises(ValueError, match="quality bar of 'acc'"):
        parse_bars({"acc": bounds})


def test_violations_list_missed_bounds_and_unmeasured_metrics():
    bar = {"test_accuracy": {"min": 0.9}, "chance": {"max": 0.2}, "robust_accuracy": {"min": 0.5}}
    quality = {"test_accuracy": 0.95, "chance": 0.25}
    assert bar_violations(quality, bar) == ["chance=0.2500, bar <= 0.2", "robust_accuracy: not measured"]
    assert bar_violations({"x": 0.9}, {"x": {"min": 0.9, "max": 0.9}}) == []


def test_relative_bars_have_no_manifest_form():
    with pytest.raises(ValueError, match="only absolute"):
        Bars((Bar(2.0, "max", "times_floor"),)).to_dict()
