"""Calibration over several seeds: ``cfcheck calibrate --seeds`` tabulates every seed's verdicts and
lists where a control went against its expectation on some seed; ``cfcheck calibrate --domain``
earns a bar only where the controls' intervals separate on every seed together."""

from __future__ import annotations

import json

import pytest

from cfcheck.calibration import store as calibration_store
from cfcheck.cli import calibrate_run as calibration
from cfcheck.controls import expected_sign
from cfcheck.kinds.vce.calibration import derive_bars


def _score(metric, suite, task, value, verdict, low=None, high=None, domain="morpho"):
    return {
        "kind": "vce",
        "domain": domain,
        "suite": suite,
        "metric": metric,
        "task": task,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "verdict": verdict,
        "n": 40,
        "direction": "higher",
        "threshold": ">= 0.8",
    }


def _publish(out, seed, name, scores):
    folder = calibration.seed_folder(out, seed) / f"{name}-quick"
    folder.mkdir(parents=True)
    card = {
        "format": 3,
        "status": "complete",
        "method": name,
        "outcomes": {},
        "costs": {},
        "scores": scores,
        "profile": {"name": "quick"},
        "provenance": {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:07+00:00"},
    }
    (folder / "scorecard.json").write_text(json.dumps(card))


def test_seed_zero_keeps_the_old_layout_and_other_seeds_get_their_own_folder(tmp_path):
    assert calibration.seed_folder(tmp_path, 0) == tmp_path
    assert calibration.seed_folder(tmp_path, 2) == tmp_path / "seed2"


def _runs():
    """seed → control → scorecard: the truth passes target accuracy on seed 0 and is inconclusive on
    seed 1's second task; identity fails everywhere but passes on seed 1's first task."""
    truth = {0: ["pass", "pass"], 1: ["pass", "inconclusive"]}
    identity = {0: ["fail", "fail"], 1: ["pass", "fail"]}
    return {
        seed: {
            name: [
                _score("target_accuracy", "validity", f"cnn/{pair}/seed{seed}", 0.9, verdict)
                for pair, verdict in zip(("ideal", "other"), verdicts[seed])
            ]
            for name, verdicts in (("truth", truth), ("identity", identity))
        }
        for seed in (0, 1)
    }


def test_disagreements_count_each_seed_against_a_brute_force_count():
    runs = _runs()
    found = calibration.bar_disagreements(
        {seed: {n: {"scores": s} for n, s in by.items()} for seed, by in runs.items()}
    )
    brute = {}
    for seed, by_control in runs.items():
        for control, scores in by_control.items():
            sign = expected_sign(control, "validity")
            for score in scores:
                against = score["verdict"] != "pass" if sign == "+" else score["verdict"] == "pass"
                if against:
                    brute.setdefault(("target_accuracy", control, sign), {}).setdefault(seed, 0)
                    brute["target_accuracy", control, sign][seed] += 1
    assert found == brute == {("target_accuracy", "identity", "-"): {1: 1}, ("target_accuracy", "truth", "+"): {1: 1}}


def test_calibrate_over_seeds_tabulates_each_seed_and_keeps_every_seeds_values(tmp_path, monkeypatch, capsys):
    (tmp_path / "morpho").mkdir()
    monkeypatch.setattr(
        calibration_store, "calibration_path", lambda domain, profile: tmp_path / domain / f"calibration-{profile}.json"
    )
    out = tmp_path / "published"
    runs = _runs()
    for seed, by_control in runs.items():
        for name in calibration.KIND_CONTROLS["vce"]:
            _publish(out, seed, name, by_control.get(name, runs[seed]["identity"]))
    methods = list(calibration.KIND_CONTROLS["vce"])
    assert calibration.main(["--reuse", "--out", str(out), "--seeds", "0", "1", "--methods", *methods]) == 0
    printed = capsys.readouterr()
    truth_row = next(line for line in printed.out.splitlines() if line.startswith("| truth |"))
    assert "s0 PASS 2/2 · s1 INCONCL. 1/2 (1 inconcl.)" in truth_row
    assert "| target_accuracy | truth | pass | 0 | 1 |" in printed.out
    assert "seeds 0, 1" in printed.err
    values = json.loads((tmp_path / "morpho" / "calibration-quick.json").read_text())["values"]
    assert {key.rsplit("/", 1)[1] for key in values} == {"seed0]", "seed1]"}  # both seeds, side by side
    assert len(values) == 4


def _domain_run(seed, values, lows, highs, controls=("truth", "identity")):
    return {
        control: {
            "scores": [_score("target_accuracy", "validity", f"cnn/seed{seed}", value, None, low, high, domain="mine")]
        }
        for control, value, low, high in zip(controls, values, lows, highs)
    }


def test_a_domain_bar_sits_between_the_interval_ends_not_the_values():
    # values 0.9 and 0.1, intervals [0.7, 1] and [0, 0.3]: a validity bar asks for 80 % right
    # counterfactuals between the interval ends, 0.3 + 0.8 · (0.7 − 0.3)
    bar, why = derive_bars(_domain_run(0, (0.9, 0.1), (0.7, 0.0), (1.0, 0.3)), "quick", "mine")["target_accuracy"]
    assert bar.bound == pytest.approx(0.62) and bar.kind == "min"
    assert (
        "(expected to pass; worst 95% interval end): truth 0.7" in why
        and "(expected to fail; best end): identity 0.3" in why
    )
    # values separate, intervals overlap: no bar, as a verdict on either control would be inconclusive
    bar, why = derive_bars(_domain_run(0, (0.6, 0.4), (0.45, 0.3), (0.75, 0.55)), "quick", "mine")["target_accuracy"]
    assert bar is None and why.startswith("the controls overlap")


def test_a_domain_bar_must_hold_on_every_seed():
    seed0 = _domain_run(0, (0.9, 0.1), (0.8, 0.0), (1.0, 0.2))
    seed1 = _domain_run(1, (0.9, 0.3), (0.8, 0.15), (1.0, 0.85))  # identity's interval reaches 0.85 on seed 1
    alone, _ = derive_bars(seed0, "quick", "mine")["target_accuracy"]
    assert alone is not None and alone.bound == pytest.approx(0.2 + 0.8 * (0.8 - 0.2))
    together, why = derive_bars([seed0, seed1], "quick", "mine")["target_accuracy"]
    assert together is None and "2 seeds" in why and "0.85" in why
