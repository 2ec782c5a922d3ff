"""The attribution kind's bars: derived from controls by the documented rule (checked against
hand-computed cases and properties), kept beside a bundled domain's card bars, and the verdicts
they give when an attribution method runs the ROAD suite as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.calibration.bars import domain_bars, read_bars_file, write_domain_bars
from cfcheck.calibration.runs import bundled_adapter
from cfcheck.core.keys import read_keyed
from cfcheck.core.thresholds import Bar
from cfcheck.kinds.attribution.calibration import (
    CALIBRATED,
    OTHER_RANDOM_SEEDS,
    RANDOMISATION_SCORES,
    derive_gap_bars,
    gap_key,
    measure_randomisation,
)
from cfcheck.metrics.cards import CARDS

ROLES = {"gradient": "+", "noisy 1": "ladder:1", "noisy 4": "ladder:4", "random": "-"}


def gaps(gradient, noisy1, noisy4, random):
    """One score, seeds 0 and 1: control → seed → gap."""
    return {
        "road_gap_morf": {
            "gradient": dict(enumerate(gradient)),
            "noisy 1": dict(enumerate(noisy1)),
            "noisy 4": dict(enumerate(noisy4)),
            "random": dict(enumerate(random)),
        }
    }


def test_a_bar_sits_halfway_between_the_worst_positive_and_the_best_negative():
    derived = derive_gap_bars(gaps([0.55, 0.47], [0.41, 0.38], [0.13, 0.12], [0.004, -0.01]), ROLES, "d", "quick")
    bar, why = derived["road_gap_morf"]
    assert bar == Bar((0.12 + 0.004) / 2, "min")  # the ladder's last rung on seed 1; random on seed 0
    assert "noisy 4" in why and "random" in why and "seeds 0, 1" in why


def test_no_bar_where_the_ladder_does_not_fall_or_the_controls_overlap():
    rising = derive_gap_bars(gaps([0.5, 0.5], [0.2, 0.3], [0.25, 0.1], [0.0, 0.0]), ROLES, "d", "quick")
    assert rising["road_gap_morf"][0] is None and "seed 0" in rising["road_gap_morf"][1]
    overlap = derive_gap_bars(gaps([0.5, 0.01], [0.3, 0.3], [0.02, 0.01], [0.0, 0.015]), ROLES, "d", "quick")
    assert overlap["road_gap_morf"][0] is None and "overlap" in overlap["road_gap_morf"][1]
    unresolved = derive_gap_bars(gaps([0.5, 0.5], [0.01, 0.3], [0.005, 0.01], [0.0, 0.015]), ROLES, "d", "quick")
    bar, why = unresolved["road_gap_morf"]
    assert bar is None and "least noisy rung" in why and "noise 1× its norm from random" in why


def test_rungs_past_the_resolution_count_as_neither_positive_nor_negative():
    # the noisiest rung does not clear the best random value (0.015) on seed 1: it is past the
    # score's resolution, and the bar sits between the resolved rung's worst and the best negative
    derived = derive_gap_bars(gaps([0.5, 0.5], [0.3, 0.25], [0.02, 0.01], [0.0, 0.015]), ROLES, "d", "quick")
    bar, why = derived["road_gap_morf"]
    assert bar == Bar((0.25 + 0.015) / 2, "min")
    assert "resolves noise up to 1× the signal's norm" in why and "4× (worst +0.01)" in why
    # the first unresolved rung must still fall below the resolved ones: a rise there is no ladder
    rising = derive_gap_bars(gaps([0.5, 0.5], [0.3, 0.25], [0.02, 0.26], [0.0, 0.015]), ROLES, "d", "quick")
    assert rising["road_gap_morf"][0] is None and "does not fall" in rising["road_gap_morf"][1]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=8, max_size=8))
def test_a_derived_bar_separates_every_control_property(values):
    gradient, noisy1, noisy4, random = (values[i : i + 2] for i in range(0, 8, 2))
    bar, _ = derive_gap_bars(gaps(gradient, noisy1, noisy4, random), ROLES, "d", "quick")["road_gap_morf"]
    # with two rungs, the ladder must fall from the first to the second on each seed whether the
    # second is resolved or not, and the least noisy rung must be resolved
    falls = all(a > b for a, b in zip(noisy1, noisy4))
    separated = min(gradient + noisy1) > max(random)
    assert (bar is not None) == (falls and separated)
    if bar is not None:
        assert all(v >= bar.bound for v in gradient + noisy1) and all(v <= bar.bound for v in random)
        resolved = min(noisy4) > max(random)
        assert bar.bound == (min(gradient + noisy1 + noisy4 * resolved) + max(random)) / 2


class _Bundled:
    name, card_calibrated = "bundled", True

    def __init__(self, folder):
        self.calibration_dir = folder


class _Profile:
    name = "quick"
    thresholds = {"target_accuracy": Bar(0.8, "min")}


def test_a_bundled_domain_adds_its_own_bars_to_the_cards_and_calibrations_keep_each_others(tmp_path):
    path = tmp_path / "bars-quick.json"
    write_domain_bars(
        path,
        {"target_accuracy": (Bar(0.1, "min"), "vce controls")},
        domain="bundled",
        profile="quick",
        controls={"identity": "validity-"},
        method_kind="vce",
        cards=CARDS,
    )
    write_domain_bars(
        path,
        {"road_gap:morf": (Bar(0.03, "min"), "attribution controls")},
        domain="bundled",
        profile="quick",
        controls={"random": "-"},
        method_kind="attribution",
        cards=CARDS,
    )
    bars, _ = read_bars_file(path, cards=CARDS)
    assert set(bars) == {"target_accuracy", "road_gap:morf"}  # the second calibration kept the first's bar
    assert set(json.loads(path.read_text())["controls"]) == {"vce", "attribution"}
    judged = domain_bars(_Bundled(tmp_path), _Profile(), {}, cards=CARDS)
    assert judged.source == "cards" and judged.get("target_accuracy", "target_accuracy") == Bar(0.8, "min")
    assert judged.get("road_gap:morf", "road_gap") == Bar(0.03, "min")  # added: the cards have no ROAD bar
    assert judged.get("road_gap:lerf", "road_gap") is None
    facts = judged.describe()
    assert set(facts["domain_bars"]) == {"road_gap:morf"} and facts["domain_bars"]["road_gap:morf"]["rationale"]
    # recalibrating one kind replaces its own entries only
    write_domain_bars(path, {}, domain="bundled", profile="quick", controls={}, method_kind="attribution", cards=CARDS)
    assert set(read_bars_file(path, cards=CARDS)[0]) == {"target_accuracy"}


def test_the_bundled_morpho_road_bar_is_the_one_its_calibration_derives():
    from cfcheck.domains import get_domain

    morpho = Path(get_domain("morpho").calibration_dir)
    values = json.loads((morpho / "calibration-attribution-quick.json").read_text())
    for section in ("values", "without_bar"):  # written before one spelling: road_gap_morf, read as road_gap:morf
        values[section] = read_keyed(values[section], CARDS)
    gap_keys = {gap_key(strategy, order) for strategy, order in CALIBRATED}
    measured = {
        key: {control: {int(seed): gap for seed, gap in seeds.items()} for control, seeds in by.items()}
        for key, by in values["values"].items()
        if key in gap_keys
    }
    # the file also holds each control's randomisation similarity per seed (no bar), for the same seeds
    assert set(values["values"]) == gap_keys | {key for key, _ in RANDOMISATION_SCORES}
    for key, _ in RANDOMISATION_SCORES:
        assert set(values["values"][key]) == set(values["roles"])
        assert all(set(by) == {str(s) for s in values["seeds"]} for by in values["values"][key].values())
    derived = derive_gap_bars(measured, values["roles"], "morpho", "quick", values["seeds"])
    bars, _ = read_bars_file(morpho / "bars-quick.json", cards=CARDS)
    assert bars["road_gap:morf"] == derived["road_gap:morf"][0]
    for key in gap_keys:  # every other gap: the bar derived from the values, or none and the reason kept
        assert bars.get(key) == derived[key][0], key
        assert derived[key][0] is not None or values["without_bar"][key] == derived[key][1]
    assert derived["road_gap:lerf"][0] is None and "road_gap:lerf" not in bars


def run_road(tmp_path: Path, fixture: str, domain: str) -> dict:
    """``pytest suites/attribution/test_road.py --method=fixtures/attribution/<file>.py`` as a user runs it."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(root / "suites" / "attribution" / "test_road.py"),
            f"--method={root.joinpath(*bundled_adapter(fixture).split('.')[1:])}.py",
            f"--cfcheck-domain={domain}",
            "--cfcheck-profile=quick",
            f"--cfcheck-report-dir={tmp_path}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-o",
            "addopts=",
            "--cfcheck-no-cache",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    path = tmp_path / f"{fixture}-quick" / "scorecard.json"
    assert path.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fixture", "expected"), [("attr_gradient", "pass"), ("attr_noisy_gradient", "pass"), ("attr_random", "fail")]
)
def test_road_morf_gates_on_morpho_and_reports_lerf(tmp_path, fixture, expected):
    scorecard = run_road(tmp_path, fixture, "morpho")
    verdicts = {s["metric"]: s["verdict"] for s in scorecard["scores"]}
    assert verdicts["road_gap:morf"] == expected, scorecard["scores"]
    assert verdicts["road_gap:lerf"] is None and verdicts["road_area:morf"] is None


def test_the_controls_randomisation_similarity_separates_model_dependence(tmp_path):
    import dataclasses

    from cfcheck.domains import get_domain
    from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

    section = dataclasses.replace(SECTION_DEFAULTS["quick"], n_inputs=6, randomisation_draws=2)
    values = measure_randomisation(get_domain("morpho"), section, seeds=(0,), log=lambda line: None)
    plain, support = (values[key] for key, _ in RANDOMISATION_SCORES)
    assert (
        set(plain)
        == set(support)
        == {
            "gradient",
            "input×gradient",
            "smoothgrad",
            "integrated gradients",
            *(f"random (seed {s})" for s in OTHER_RANDOM_SEEDS),
            *(f"gradient + noise {r:g}" for r in (0.5, 1, 2, 4, 8)),
        }
    )
    # a gradient has no exact zeros (both variants agree); the input factor's shared zeros lift the
    # plain similarity of input×gradient near 1, not its support's; noise of 8 times the gradient's
    # norm, the same for both models, makes the maps alike; a fresh random map per call is unrelated
    assert plain["gradient"][0] == pytest.approx(support["gradient"][0]) and plain["gradient"][0] < 0.5
    assert plain["input×gradient"][0] > 0.9 > support["input×gradient"][0] + 0.3
    assert plain["gradient + noise 8"][0] > 0.8 and all(
        abs(plain[f"random (seed {s})"][0]) < 0.2 for s in OTHER_RANDOM_SEEDS
    )
    gmm = get_domain("gmm")  # no random classifier: nothing to compare
    assert measure_randomisation(gmm, section, seeds=(0,), log=lambda line: None) == {}


def test_a_values_file_merges_as_a_partial_file_and_keeps_its_similarities_apart():
    from cfcheck.domains import get_domain
    from cfcheck.kinds.attribution.calibration import _as_partial, merge_measurements

    folder = Path(get_domain("morpho").calibration_dir)
    values = json.loads((folder / "calibration-attribution-quick.json").read_text())
    part = _as_partial(json.loads((folder / "calibration-attribution-quick.json").read_text()))
    similarity = {key for key, _ in RANDOMISATION_SCORES}
    assert set(part["randomisation"]) == similarity and not similarity & set(part["values"])
    merged = merge_measurements([part])
    gaps = {
        key: {c: {int(s): v for s, v in by.items()} for c, by in per.items()}
        for key, per in read_keyed(values["values"], CARDS).items()  # read in the one spelling
        if key not in similarity
    }
    assert "road_gap:morf" in merged["values"] and set(merged["values"]) <= set(gaps)  # one spelling only
    assert merged["values"] == gaps and merged["roles"] == values["roles"]
    # a new seed measured elsewhere joins; a different value for a measured one is refused
    extra = {"values": {"goar_gap": {"gradient": {"7": 0.5}}}, "areas": {}, "roles": {"gradient": "+"}}
    assert merge_measurements([part, extra])["values"]["goar_gap"]["gradient"][7] == 0.5
    clash = {"values": {"goar_gap": {"gradient": {"0": 0.123}}}, "areas": {}, "roles": {"gradient": "+"}}
    with pytest.raises(ValueError, match="differ"):
        merge_measurements([part, clash])


def test_a_merge_refuses_roar_and_goar_gaps_measured_with_other_retraining_draws(tmp_path):
    from cfcheck.kinds.attribution.gap_measurements import check_draws

    roar = {"values": {"roar_gap_lerf": {"gradient": {"0": 0.3}}, "road_gap_morf": {"gradient": {"0": 0.5}}}}
    with pytest.raises(ValueError, match="roar_gap_lerf measured with 1 retraining draw"):
        check_draws(tmp_path / "old.json", roar, 3)  # a file without the field predates draws: one
    check_draws(tmp_path / "new.json", {**roar, "retraining_draws": 3}, 3)
    with pytest.raises(ValueError, match="with 3 retraining draw"):
        check_draws(tmp_path / "new.json", {**roar, "retraining_draws": 3}, 5)
    road_only = {"values": {"road_gap_morf": {"gradient": {"0": 0.5}}}}  # ROAD retrains nothing
    check_draws(tmp_path / "old.json", road_only, 3)
