"""The suites tell good from bad: each bundled control gets the verdict it exists for.

Each control runs through every suite on the ``quick`` profile (the one method authors gate
their CI with), exactly as a user's method would; the assertions read its scorecard.
"""

from __future__ import annotations

import json

import pytest

EXPLAINED = ("cnn", "robust_cnn", "mlp", "noise_cnn")


@pytest.fixture
def scorecard_of(pytester):
    def run(control: str) -> dict:
        pytester.runpytest(f"--method=cfcheck.fixtures.{control}", "--cfcheck-profile=quick", "-q")
        path = pytester.path / "reports" / f"{control}-quick" / "scorecard.json"
        scorecard = json.loads(path.read_text())
        assert scorecard["status"] == "complete"
        return scorecard

    return run


def _verdicts(scorecard: dict, metric: str) -> dict[str, bool]:
    found = {s["task"]: s["passed"] for s in scorecard["scores"] if s["metric"] == metric}
    assert found, f"no {metric} scores recorded"
    return found


def _suite_passes(scorecard: dict, suite: str) -> bool:
    scores = [s for s in scorecard["scores"] if s["suite"] == suite and s["passed"] is not None]
    assert scores, f"no {suite} scores recorded"
    return all(s["passed"] for s in scores)


def test_identity_fails_validity(scorecard_of):
    scorecard = scorecard_of("identity")
    assert not any(_verdicts(scorecard, "target_accuracy").values())
    assert not any(_verdicts(scorecard, "committee_oracle_target_accuracy").values())
    # it explains nothing, so the randomisation check sees identical explanations
    assert not any(_verdicts(scorecard, "randomisation_similarity").values())


def test_noise_fails_closeness_and_realism(scorecard_of):
    scorecard = scorecard_of("noise")
    for metric in ("perceptual_distance", "d2", "fid_target", "fid_domain", "kid_target", "kid_domain"):
        assert not any(_verdicts(scorecard, metric).values()), metric
    assert not _suite_passes(scorecard, "closeness") and not _suite_passes(scorecard, "realism")


def test_pgd_passes_target_accuracy_but_fails_oracle_validity(scorecard_of):
    scorecard = scorecard_of("pgd")
    accuracy = _verdicts(scorecard, "target_accuracy")
    committee = _verdicts(scorecard, "committee_oracle_target_accuracy")
    standard = [task for task in accuracy if task.startswith("cnn/")]
    assert standard and all(accuracy[task] for task in standard)
    assert not any(committee[task] for task in standard)


def test_nearest_neighbour_passes_validity_and_realism(scorecard_of):
    scorecard = scorecard_of("nearest")
    assert _suite_passes(scorecard, "validity")
    assert _suite_passes(scorecard, "realism")


def test_wachter_is_adversarial_except_on_the_robust_classifier(scorecard_of):
    """Väth et al. H1: gradient counterfactuals flip every classifier, but only a robust
    classifier's gradients change what independent oracles see."""
    scorecard = scorecard_of("wachter")
    accuracy = _verdicts(scorecard, "target_accuracy")
    assert all(accuracy.values())
    committee = {s["task"]: s["value"] for s in scorecard["scores"] if s["metric"] == "committee_oracle_target_accuracy"}
    for pair_set in ("ideal", "other"):
        robust, standard = committee[f"robust_cnn/{pair_set}/seed0"], committee[f"cnn/{pair_set}/seed0"]
        assert robust >= 0.5 and standard <= 0.3 and robust - standard >= 0.3, (robust, standard)
