"""The baseline ratchet in a tiny run (pytester): what saving stores and says, known failures as xfail,
vanished scores, refused baselines, the option and its setting, and the per-suite markers."""

from __future__ import annotations

import json

import pytest

IDENTITY = """
import pytest

class Identity:
    def explain(self, x, target, classifier):
        return x.clone()

@pytest.fixture
def cf_method():
    return Identity()
"""
SELECTION = ("-k", "vce and test_validity and (test_target_accuracy or test_coverage or test_class_change)")


@pytest.fixture
def identity(tiny):
    tiny.makepyfile(identity=IDENTITY)
    return tiny


def test_a_run_with_failures_is_saved_and_its_failures_are_known_next_time(identity):
    saved = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-save-baseline=ci/base.json")
    assert saved.ret == pytest.ExitCode.TESTS_FAILED  # the identity misses target accuracy
    saved.stdout.fnmatch_lines(["baseline saved to ci/base.json: 3 scores, 1 missing their bars (1 failed, *"])
    stored = json.loads((identity.path / "ci" / "base.json").read_text())
    (accuracy,) = [s for s in stored["scores"] if s["metric"] == "target_accuracy"]
    assert accuracy["verdict"] == "fail" and accuracy["ci_high"] is not None

    again = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-baseline=ci/base.json", "-rx")
    assert again.ret == pytest.ExitCode.OK
    again.assert_outcomes(passed=2, xfailed=1)
    again.stdout.fnmatch_lines(
        [
            "against the baseline ci/base.json: 1 known failures (xfailed), 0 new failures, 0 regressed, *",
            "PASS: no score fails (0 pass); 1 known failure (missed their bars in the baseline too, not worse)*",
            "XFAIL *test_target_accuracy* - known failure (the baseline had 0 *, fail; not worse beyond the "
            "tolerance): target_accuracy = 0 *",
        ]
    )
    scorecard = json.loads((identity.path / "reports" / "identity-standard" / "scorecard.json").read_text())
    statuses = {s["metric"]: s["baseline_status"] for s in scorecard["scores"]}
    assert statuses == {"target_accuracy": "known_failure", "coverage": "unchanged", "tcv": "unchanged"}
    assert scorecard["baseline"]["statuses"] == {"known_failure": 1, "unchanged": 2}
    changes = (identity.path / "reports" / "identity-standard" / "changes.md").read_text()
    assert "**PASS**: nothing got worse" in changes and "#### Known failures (1)" in changes

    strict = identity.runpytest(
        "--method=identity", *SELECTION, "--cfcheck-baseline=ci/base.json", "--cfcheck-known-failures=fail"
    )
    strict.assert_outcomes(passed=2, failed=1)
    strict.stdout.fnmatch_lines(["*(a known failure: the baseline had 0 *; --cfcheck-known-failures=fail)"])


def test_an_incomplete_run_is_not_saved(identity):
    result = identity.runpytest("--method=identity", *SELECTION, "-x", "--cfcheck-save-baseline=base.json")
    result.stdout.fnmatch_lines(["baseline NOT saved to base.json: the run is incomplete (interrupted, or stopped *"])
    assert not (identity.path / "base.json").exists()


def test_a_score_whose_test_ran_without_recording_it_fails_the_run(identity):
    identity.runpytest("--method=identity", *SELECTION, "--cfcheck-save-baseline=base.json")
    stored = json.loads((identity.path / "base.json").read_text())
    gone = dict(stored["scores"][0], metric="a_score_no_longer_recorded")  # the same test recorded another score
    stored["scores"].append(gone)
    (identity.path / "base.json").write_text(json.dumps(stored))
    result = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-baseline=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every test passed or xfailed
    result.assert_outcomes(passed=2, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*0 could not be computed, 1 vanished, 0 fixed, 0 improved",
            "  vanished (its test ran, the score was not recorded): vce/morpho/validity/a_score_no_longer_recorded*",
            "FAIL: 1 scores of the baseline vanished (their tests ran without recording them)*",
        ]
    )


def test_baselines_that_cannot_gate_this_run_are_usage_errors(identity):
    identity.runpytest("--method=identity", *SELECTION, "--cfcheck-profile=quick", "--cfcheck-save-baseline=q.json")
    other = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-baseline=q.json")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(["*--cfcheck-baseline: q.json was saved at the quick profile and this run is standard*"])
    (identity.path / "bad.json").write_text("{}")
    bad = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-baseline=bad.json")
    bad.stderr.fnmatch_lines(["*--cfcheck-baseline: bad.json is not a cfcheck scorecard*--cfcheck-save-baseline PATH*"])
    wrong = identity.runpytest("--method=identity", "--cfcheck-known-failures=maybe")
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    wrong.stderr.fnmatch_lines(
        ["*--cfcheck-known-failures: invalid choice: 'maybe' (choose from 'xfail', 'strict', 'fail')*"]
    )


def test_the_known_failures_setting_in_pyproject(identity, tiny_settings):
    identity.makepyprojecttoml(
        tiny_settings.replace("[tool.cfcheck]\n", '[tool.cfcheck]\nknown_failures = "sometimes"\n')
    )
    result = identity.runpytest("--method=identity", *SELECTION)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*known_failures must be one of ('xfail', 'strict', 'fail'), got 'sometimes'*"])


def test_markers_select_the_suites_a_method_claims(identity):
    result = identity.runpytest("--method=identity", "-m", "validity or contract", "--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert ids and all("test_validity.py::" in i or "test_contract.py::" in i for i in ids)
    assert any("test_contract.py::" in i for i in ids) and any("test_validity.py::" in i for i in ids)
