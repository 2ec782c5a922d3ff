"""The SCM domain calibration's parts, on constructed control values whose bars are known by
arithmetic: the shared placement rule (:mod:`cfcheck.calibration.placement`) with the SCM kind's
rules, the one implementation the VCE calibration uses too, the plan of the controls, and the
command's options shared between kinds."""

from __future__ import annotations

import pytest

from cfcheck.calibration import placement
from cfcheck.kinds.scm.calibration import plan_controls
from cfcheck.kinds.scm.calibration_expectations import CONTROL_ORDER, EXPECTED, POSITIVE_EXPECTATIONS, rules
from cfcheck.metrics.cards import CARDS

DOMAIN = "mine"
TABLE = {**EXPECTED, "renderer": POSITIVE_EXPECTATIONS}


def _score(suite, metric, value, low, high, task="do_size/seed0"):
    return {
        "suite": suite,
        "metric": metric,
        "task": task,
        "domain": DOMAIN,
        "value": value,
        "ci_low": low,
        "ci_high": high,
    }


def _run(**by_control):
    return {control: {"scores": scores} for control, scores in by_control.items()}


def _place(runs):
    return placement.place_bars(runs, "quick", DOMAIN, rules(TABLE), cards=CARDS)


def test_a_lower_is_better_bar_sits_halfway_between_the_worst_positive_and_the_best_negative():
    metric = "effectiveness_predictor_error:size"
    seed0 = _run(
        renderer=[_score("effectiveness", metric, 0.1, 0.05, 0.2)],
        random_real=[_score("effectiveness", metric, 0.3, 0.2, 0.4)],
        identity=[_score("effectiveness", metric, 1.4, 1.2, 1.6)],
        noise=[_score("effectiveness", metric, 4.0, 3.8, 4.2)],
    )
    seed1 = _run(random_real=[_score("effectiveness", metric, 0.35, 0.25, 0.6)])  # the worst positive end: 0.6
    found = _place([seed0, seed1])[metric]
    assert found.bar is not None and found.bar.kind == "max" and found.basis == "between"
    assert found.bar.bound == pytest.approx((0.6 + 1.2) / 2)
    assert "random_real 0.6" in found.rationale and "identity 1.2" in found.rationale and "2 seeds" in found.rationale
    assert found.verdicts["identity"] == {"fail": 1} and found.verdicts["renderer"] == {"pass": 1}


def test_the_placement_reads_the_cards_its_caller_passes():
    metric = "effectiveness_predictor_error:size"
    runs = _run(
        renderer=[_score("effectiveness", metric, 0.1, 0.05, 0.2)],
        identity=[_score("effectiveness", metric, 1.4, 1.2, 1.6)],
    )
    assert set(_place(runs)) == {metric}
    # without the SCM kind's own card the score has no direction to place a bar by: it is left out
    assert placement.place_bars(runs, "quick", DOMAIN, rules(TABLE), cards={}) == {}


def test_an_accuracy_asks_for_80_percent_right_counterfactuals():
    metric = "effectiveness_predictor_accuracy:type"
    runs = _run(
        renderer=[_score("effectiveness", metric, 1.0, 0.95, 1.0)],
        identity=[_score("effectiveness", metric, 0.0, 0.0, 0.05)],
    )
    found = _place(runs)[metric]
    assert found.basis == "share" and found.bar.kind == "min"
    assert found.bar.bound == pytest.approx(0.05 + 0.8 * (0.95 - 0.05))


def test_overlapping_controls_earn_no_bar_and_the_reason_names_them_and_what_to_change():
    metric = "effectiveness_predictor_error:brightness"
    runs = _run(
        random_real=[_score("effectiveness", metric, 0.9, 0.7, 1.3)],
        identity=[_score("effectiveness", metric, 1.4, 1.2, 1.6)],
    )
    found = _place(runs)[metric]
    assert found.bar is None
    assert "random_real (expected to pass) reaches 1.3 at worst, identity (expected to fail) 1.2" in found.rationale
    assert "n_inputs in [tool.cfcheck.scm]" in found.rationale  # the values separate: more inputs


def test_composition_is_passed_by_identity_and_failed_by_a_random_real_image():
    metric = "composition_l1:m1"
    runs = _run(
        identity=[_score("composition", metric, 0.0, 0.0, 0.0)],
        random_real=[_score("composition", metric, 0.05, 0.04, 0.06)],
        nearest_real=[_score("composition", metric, 0.03, 0.02, 0.04)],
    )
    found = _place(runs)[metric]
    assert found.bar.bound == pytest.approx(0.01) and found.bar.kind == "max"


def test_coverage_and_scores_without_a_positive_or_a_negative_get_no_bar_with_the_reason():
    runs = _run(
        renderer=[
            _score("ground_truth", "coverage", 1.0, 0.96, 1.0),
            _score("causal_graph", "preservation_predictor_error:type", 0.1, 0.0, 0.2),
        ],
        noise=[_score("ground_truth", "coverage", 1.0, 0.96, 1.0), _score("minimality", "cld", 0.6, 0.55, 0.65)],
    )
    found = _place(runs)
    assert found["coverage"].bar is None and "every control answers them all" in found["coverage"].rationale
    assert found["preservation_predictor_error:type"].rationale == "no negative control is expected to fail it"
    assert found["cld"].rationale.startswith("no positive control is expected to pass it: no bundled control is a ")
    assert "--positive METHOD" in found["cld"].rationale


def test_without_a_positive_the_causal_graph_gets_no_bar_and_the_reason_says_why():
    metric = "preservation_predictor_error:size"
    runs = _run(
        random_real=[_score("causal_graph", metric, 0.3, 0.2, 0.4)],
        any_real=[_score("causal_graph", metric, 1.2, 1.0, 1.4)],
        noise=[_score("causal_graph", metric, 4.0, 3.8, 4.2)],
    )
    found = placement.place_bars(runs, "quick", DOMAIN, rules(), cards=CARDS)[metric]
    assert found.bar is None
    assert "no bundled control shows every attribute as the causal graph propagates it" in found.rationale
    assert "--positive METHOD" in found.rationale
    vce = placement.place_bars(runs, "quick", DOMAIN, placement.PlacementRules(expected=dict(EXPECTED)), cards=CARDS)[
        metric
    ]
    assert vce.rationale == "no positive control is expected to pass it"  # the shared rule's default is kept


def test_the_any_cell_real_image_places_the_causal_graph_bar_nearer_the_positive_than_noise():
    metric = "preservation_predictor_error:brightness"
    runs = _run(
        renderer=[_score("causal_graph", metric, 0.1, 0.05, 0.2)],
        random_real=[_score("causal_graph", metric, 0.3, 0.2, 0.4)],  # expected nothing of the graph
        any_real=[_score("causal_graph", metric, 1.2, 1.0, 1.4)],
        noise=[_score("causal_graph", metric, 4.0, 3.8, 4.2)],
    )
    found = _place(runs)[metric]
    assert found.bar.bound == pytest.approx((0.2 + 1.0) / 2)  # not (0.2 + 3.8) / 2, halfway to noise
    assert "any_real 1" in found.rationale and "noise 3.8" in found.rationale
    assert found.verdicts["any_real"] == {"fail": 1} and "random_real" in found.verdicts


def test_a_check_moves_the_bar_so_that_it_does_not_pass():
    metric = "effectiveness_predictor_error:size"
    table = {**TABLE, "half_right": [("effectiveness", "x")]}
    runs = _run(
        renderer=[_score("effectiveness", metric, 0.1, 0.05, 0.2)],
        identity=[_score("effectiveness", metric, 1.4, 1.2, 1.6)],
        half_right=[_score("effectiveness", metric, 0.5, 0.4, 0.6)],  # passes the halfway bar 0.7 (high end 0.6)
    )
    found = placement.place_bars(runs, "quick", DOMAIN, rules(table), cards=CARDS)[metric]
    assert found.bar.bound == pytest.approx((0.6 + 0.2) / 2)  # halfway from its high end to the worst positive
    assert "half_right (expected not to pass)" in found.rationale


def test_the_vce_calibration_places_its_bars_with_the_same_rule():
    from cfcheck.kinds.vce import bar_placement

    assert bar_placement.Placement is placement.Placement
    assert bar_placement.comparable_value is placement.comparable_value
    runs = _run(
        truth=[{**_score("validity", "target_accuracy", 0.9, 0.8, 1.0), "task": "t"}],
        identity=[{**_score("validity", "target_accuracy", 0.0, 0.0, 0.1), "task": "t"}],
    )
    ours = placement.place_bars(runs, "quick", DOMAIN, bar_placement.rules(), cards=CARDS)["target_accuracy"]
    assert bar_placement.place_bars(runs, "quick", DOMAIN)["target_accuracy"] == ours
    assert ours.bar.bound == pytest.approx(0.1 + 0.8 * (0.8 - 0.1))


def test_the_plan_puts_the_positives_first_and_refuses_unknown_or_clashing_controls():
    planned = plan_controls(["identity", "random_real"], ["my.renderer"])
    assert list(planned) == ["my.renderer", "identity", "random_real"]
    assert list(plan_controls(list(CONTROL_ORDER), []))[-1] == "any_real"
    assert (
        plan_controls(["any_real"], [])["any_real"]["facts"]["expected"] == "-composition -effectiveness -causal_graph"
    )
    assert planned["random_real"]["method"] == "cfcheck.fixtures.scm.random_real"
    with pytest.raises(ValueError, match=r"unknown controls \['resample'\]"):
        plan_controls(["resample"], [])
    with pytest.raises(ValueError, match="none named like a bundled control"):
        plan_controls(["identity"], ["identity"])


def test_the_command_offers_the_scm_kind_and_shares_positive_with_the_vce_kind():
    from cfcheck.cli.calibrate_domain import parser

    args = parser().parse_args(["--domain", "d.py:f", "--kind", "scm", "--positive", "a.py", "--positive", "b.py"])
    assert args.kind == "scm" and args.positive == ["a.py", "b.py"] and args.seeds == [0, 1, 2]
    text = parser().format_help()
    flat = " ".join(text.split())
    assert "vce: a positive control of your own" in flat and "scm: a positive control of your own" in flat
