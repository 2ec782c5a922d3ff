"""Where the user-domain VCE calibration puts each bar, on hand-made scorecards whose answer is
known by construction (no subprocess): the 80 % share rule, a bar between the controls, the
comparison with the nearest real image, the checks (the mixture, noise's validity) kept from passing,
the scores left without a bar, what it says where the controls overlap, and that every control's
verdict on the calibration runs is the one it exists to show."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.core.thresholds import Bar
from cfcheck.kinds.vce.bar_placement import EXPECTED, REQUIRED_SHARE, place_bars
from cfcheck.kinds.vce.calibration import derive_bars
from cfcheck.metrics.stats import verdict

SUITES = {"target_accuracy": "validity", "committee_oracle_target_accuracy": "validity", "d2": "closeness"}


def _score(metric, low, high, value=None, seed=0, suite=None, floors=None):
    score = {
        "kind": "vce",
        "domain": "mine",
        "suite": suite or SUITES.get(metric, "realism"),
        "metric": metric,
        "task": f"cnn/other/seed{seed}",
        "value": (low + high) / 2 if value is None else value,
        "ci_low": low,
        "ci_high": high,
    }
    if floors is not None:
        score["extra"] = {"real_floor": floors}
    return score


def _runs(by_control, seeds=(0,)):
    """seed → control → scorecard from control → [(metric, low, high)], the same on every seed."""
    return [
        {
            control: {"scores": [_score(m, lo, hi, seed=seed) for m, lo, hi in rows]}
            for control, rows in by_control.items()
        }
        for seed in seeds
    ]


def test_a_validity_bar_asks_for_the_required_share_of_right_counterfactuals():
    runs = _runs(
        {
            "truth": [("target_accuracy", 0.9, 1.0)],
            "random_target": [("target_accuracy", 0.93, 1.0)],
            "identity": [("target_accuracy", 0.0, 0.04)],
            "pgd": [("target_accuracy", 0.7, 0.9)],  # expected nothing of the classifier it attacks
            "noise": [("target_accuracy", 0.1, 0.3)],  # chance-level: a check, it places no bar
        },
        seeds=(0, 1, 2),
    )
    placement = place_bars(runs, "quick", "mine")["target_accuracy"]
    p, q = 0.9, 0.04  # the worst positive low end, the best negative high end
    assert placement.basis == "share" and placement.bar == Bar(q + REQUIRED_SHARE * (p - q), "min")
    assert "asks for 80% right counterfactuals" in placement.rationale
    assert all(name in placement.rationale for name in ("truth", "random_target", "identity", "noise"))
    assert "3 seeds" in placement.rationale and "noise (expected not to pass): 3 fail of 3" in placement.rationale
    assert placement.verdicts == {
        "truth": {"pass": 3},
        "random_target": {"pass": 3},
        "identity": {"fail": 3},
        "pgd": {"inconclusive": 3},
        "noise": {"fail": 3},
    }


def test_the_mixture_places_no_bar_and_is_reported_on_it():
    controls = {"truth": [("target_accuracy", 0.9, 1.0)], "identity": [("target_accuracy", 0.0, 0.1)]}
    alone = place_bars(_runs(controls), "quick", "mine")["target_accuracy"]
    failing = place_bars(_runs({**controls, "mixture": [("target_accuracy", 0.45, 0.65)]}), "quick", "mine")
    straddling = place_bars(_runs({**controls, "mixture": [("target_accuracy", 0.6, 0.85)]}), "quick", "mine")
    assert failing["target_accuracy"].bar == straddling["target_accuracy"].bar == alone.bar
    assert alone.bar.bound == pytest.approx(0.1 + 0.8 * (0.9 - 0.1))
    assert "mixture (expected not to pass): 1 fail of 1 task scores" in failing["target_accuracy"].rationale
    assert "mixture (expected not to pass): 1 inconclusive of 1" in straddling["target_accuracy"].rationale
    assert straddling["target_accuracy"].verdicts["mixture"] == {"inconclusive": 1}


def test_a_bar_a_check_would_pass_moves_towards_the_positives_or_goes():
    controls = {"truth": [("target_accuracy", 0.9, 1.0)], "identity": [("target_accuracy", 0.0, 0.1)]}
    raised = place_bars(_runs({**controls, "mixture": [("target_accuracy", 0.78, 0.95)]}), "quick", "mine")
    placement = raised["target_accuracy"]
    assert placement.bar == Bar((0.78 + 0.9) / 2, "min")  # the 80 % bar (0.74) would pass the mixture
    assert placement.verdicts["mixture"] == {"inconclusive": 1} and placement.verdicts["truth"] == {"pass": 1}
    assert "raised halfway to the worst positive from 0.78" in placement.rationale
    gone = place_bars(_runs({**controls, "mixture": [("target_accuracy", 0.92, 1.0)]}), "quick", "mine")
    assert gone["target_accuracy"].bar is None
    assert "mixture (expected not to pass) reaches 0.92 at best" in gone["target_accuracy"].rationale


@pytest.mark.parametrize("card", ["oracle_score:oracle_a", "tcv", "original_accuracy", "coverage"])
def test_scores_that_cannot_state_a_share_of_right_counterfactuals_get_no_bar(card):
    separated = {"truth": [(card, 0.9, 1.0)], "identity": [(card, 0.0, 0.1)], "pgd": [(card, 0.0, 0.1)]}
    runs = [
        {c: {"scores": [_score(m, lo, hi, suite="validity") for m, lo, hi in rows]} for c, rows in separated.items()}
    ]
    placement = place_bars(runs, "quick", "mine")[card]  # keyed as the score is named
    assert placement.bar is None and placement.rationale.startswith("reported without a bar")


def test_without_a_class_changing_positive_a_distance_is_a_named_comparison_with_the_nearest_image():
    rows = {
        "identity": [("d2", 0.0, 0.0)],
        "nearest": [("d2", 2.4, 2.6)],
        "random_target": [("d2", 3.0, 3.3)],
        "noise": [("d2", 4.0, 4.2)],
    }
    runs = _runs(rows) + [{**_runs(rows)[0], "nearest": {"scores": [_score("d2", 2.3, 2.7, seed=1)]}}]
    placement = place_bars(runs, "quick", "mine")["d2"]
    assert placement.basis == "comparison" and placement.bar == Bar(2.3, "max")  # nearest's best end, every seed
    assert "a comparison with a baseline, not an earned separation" in placement.rationale
    assert "nearest real image of the target class" in placement.rationale
    assert placement.bar.bound != pytest.approx(2.3 / 2)  # never halfway to identity
    assert placement.verdicts["noise"] == {"fail": 2} and placement.verdicts["identity"] == {"pass": 2}
    assert "pass" not in placement.verdicts["nearest"]  # the baseline never passes its own comparison


def test_with_the_truth_a_distance_bar_sits_between_the_truth_and_the_negatives_not_identity():
    rows = {
        "truth": [("d2", 3.2, 3.8)],
        "identity": [("d2", 0.0, 0.0)],
        "nearest": [("d2", 5.0, 5.5)],
        "noise": [("d2", 8.0, 9.0)],
    }
    placement = place_bars(_runs(rows), "quick", "mine")["d2"]
    assert placement.basis == "between" and placement.bar == Bar((3.8 + 5.0) / 2, "max")
    assert placement.verdicts["truth"] == {"pass": 1} and placement.verdicts["nearest"] == {"fail": 1}
    assert placement.bar.bound > 3.8  # above every positive's interval: never between identity and a negative


def test_a_user_positive_is_expected_what_the_truth_is_and_quoted_by_name():
    table = {**EXPECTED, "mypkg.methods:truth": EXPECTED["truth"]}
    rows = {
        "mypkg.methods:truth": [("d2", 3.0, 3.5)],
        "nearest": [("d2", 5.0, 5.5)],
        "noise": [("d2", 8.0, 9.0)],
    }
    names = {"mypkg.methods:truth": "mypkg.methods:truth (--positive)"}
    placement = place_bars(_runs(rows), "quick", "mine", expected=table, names=names)["d2"]
    assert placement.basis == "between" and placement.bar == Bar(4.25, "max")
    assert "mypkg.methods:truth (--positive) 3.5" in placement.rationale


def test_where_the_attack_fools_the_oracles_no_bar_and_the_reason_says_what_to_change():
    rows = {
        "truth": [("committee_oracle_target_accuracy", 0.6, 0.8)],
        "identity": [("committee_oracle_target_accuracy", 0.0, 0.05)],
        "pgd": [("committee_oracle_target_accuracy", 0.55, 0.75)],
    }
    placement = place_bars(_runs(rows), "quick", "mine")["committee_oracle_target_accuracy"]
    assert placement.bar is None and placement.rationale.startswith("the controls overlap")
    assert "pgd (expected to fail) 0.75 at best" in placement.rationale
    assert "the oracles follow the targeted attack" in placement.rationale and "independent" in placement.rationale


def test_where_only_the_intervals_overlap_the_reason_asks_for_more_inputs():
    rows = {"truth": [("target_accuracy", 0.5, 0.9)], "identity": [("target_accuracy", 0.2, 0.55)]}
    placement = place_bars(_runs(rows), "quick", "mine")["target_accuracy"]
    assert placement.bar is None and "more inputs narrow them" in placement.rationale


def test_a_floor_relative_bar_uses_the_floor_the_realism_suite_judges_by():
    # density is higher-is-better: the realism suite passes the lowest floor draw to its bar
    runs = [
        {
            "truth": {"scores": [_score("density_target", 0.85, 0.95, floors=[0.8, 1.0])]},
            "identity": {"scores": [_score("density_target", 0.0, 0.05, floors=[0.8, 1.0])]},
        }
    ]
    placement = place_bars(runs, "quick", "mine")["density_target"]
    p, q = 0.85 / 0.8, 0.05 / 0.8
    assert placement.basis == "share" and placement.bar.relative == "times_floor"
    assert placement.bar.bound == pytest.approx(q + REQUIRED_SHARE * (p - q))
    assert placement.bar.passes(0.85, floor=0.8) and not placement.bar.passes(0.05, floor=0.8)


interval = st.tuples(st.floats(0, 1), st.floats(0, 0.3)).map(lambda lw: (lw[0], min(1.0, lw[0] + lw[1])))


@settings(max_examples=60, deadline=None)
@given(positive=st.lists(interval, min_size=1, max_size=4), negative=st.lists(interval, min_size=1, max_size=4))
def test_every_control_shows_its_verdict_on_the_calibration_runs_or_there_is_no_bar(positive, negative):
    runs = [
        {
            "truth": {"scores": [_score("target_accuracy", lo, hi, seed=i) for i, (lo, hi) in enumerate(positive)]},
            "identity": {"scores": [_score("target_accuracy", lo, hi, seed=i) for i, (lo, hi) in enumerate(negative)]},
        }
    ]
    bar, why = derive_bars(runs, "quick", "mine")["target_accuracy"]
    separate = min(lo for lo, _ in positive) > max(hi for _, hi in negative)
    assert (bar is not None) == separate, why
    if bar is not None:
        assert all(verdict((lo + hi) / 2, lo, hi, bar.bound, "min") == "pass" for lo, hi in positive)
        assert all(verdict((lo + hi) / 2, lo, hi, bar.bound, "min") == "fail" for lo, hi in negative)


def test_the_share_must_lie_strictly_between_0_and_1():
    with pytest.raises(ValueError, match=r"`share` must be a number in \(0, 1\)"):
        place_bars({}, "quick", "mine", share=1.0)
