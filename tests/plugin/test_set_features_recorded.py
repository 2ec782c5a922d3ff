"""The realism suites keep each set-level score's per-input features beside the scorecard, so that
``cfcheck compare`` tests two real runs paired by input (tiny profile, bundled controls)."""

from __future__ import annotations

import pytest

from cfcheck.calibration.runs import bundled_adapter
from cfcheck.core.set_features import SET_FEATURES_FILE
from cfcheck.reporting.compare import compare_runs, load_run


@pytest.mark.parametrize(
    ("methods", "select", "metric"),
    [
        (("truth", "noise"), "vce and test_realism and fid_target", "fid_target"),
        (("scm_truth", "scm_noise"), "scm and test_realism and scm_fid", "scm_fid"),
    ],
    ids=["vce", "scm"],
)
def test_two_runs_are_tested_paired_on_a_set_level_score(tiny, methods, select, metric):
    for method in methods:
        result = tiny.runpytest(f"--method={bundled_adapter(method)}", "-k", select, "-p", "no:randomly")
        assert result.parseoutcomes().get("passed", 0) + result.parseoutcomes().get("failed", 0) >= 1, (
            result.stdout.str()[-2000:]
        )
    folders = [tiny.path / "reports" / f"{method}-standard" for method in methods]
    assert all((folder / SET_FEATURES_FILE).is_file() for folder in folders)
    comparison = compare_runs([load_run(folder) for folder in folders], set_resamples=100)
    tests = [test for test in comparison.tests if test.key[3] == metric]
    assert tests and all(test.test == "permutation" and test.p_value is not None for test in tests), tests
    # the truth against noise: every task's set differs, and the truth's value is the lower
    assert all(test.significant and test.difference < 0 for test in tests), tests
