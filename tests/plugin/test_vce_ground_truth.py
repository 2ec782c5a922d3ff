"""The VCE ground-truth scores and MNAC through a real run: the true counterfactual is 0 away
from itself and changes no attribute; leaving the input unchanged is far from it."""

from __future__ import annotations

import pytest


def _values(scorecard, metric):
    return {r["task"]: r["value"] for r in scorecard["scores"] if r["metric"] == metric}


@pytest.mark.parametrize("control", ["truth", "identity"])
def test_ground_truth_scores_of_the_truth_and_of_identity(tiny, scorecard_of, control):
    result = tiny.runpytest(
        f"--method=cfcheck.fixtures.vce.{control}", "-k", "ground_truth or attribute_changes", "-p", "no:randomly"
    )
    outcomes = result.parseoutcomes()
    # identity fails the ground-truth relative error (it is the input: 1 against the bar's 0.2), nothing else
    assert outcomes.get("failed") == (None if control == "truth" else 1), result.stdout.str()[-2000:]
    assert outcomes.get("error") is None, result.stdout.str()[-2000:]
    card = scorecard_of(control)
    relative = _values(card, "ground_truth_relative_error")
    assert set(relative) and set(relative.values()) == {0.0 if control == "truth" else 1.0}, relative
    pixel, perceptual, mnac = (_values(card, m) for m in ("ground_truth_error", "ground_truth_perceptual", "mnac"))
    assert set(pixel) == set(perceptual) == set(mnac) and pixel  # one of each per task
    if control == "truth":
        assert max(pixel.values()) == pytest.approx(0.0, abs=1e-6)
        assert max(perceptual.values()) == pytest.approx(0.0, abs=1e-5)
        assert max(mnac.values()) <= 0.25  # same thickness and intensity; the tertile oracles err near bin edges
    else:
        assert min(pixel.values()) > 0.02 and min(perceptual.values()) > 0.3  # the digit is not redrawn
        assert max(mnac.values()) == 0.0  # nothing changed, so no attribute did
    verdicts = {(r["metric"], r["verdict"]) for r in card["scores"] if r["metric"] in ("ground_truth_error", "mnac")}
    assert verdicts == {("ground_truth_error", None), ("mnac", "pass")}  # the distance has no bar; both are close to x
