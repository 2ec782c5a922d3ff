"""Ground truth: how far the method's counterfactual is from the true counterfactual, which
the domain computes from its SCM (keep every exogenous variable, apply the intervention,
propagate, re-render). No benchmark on real data can measure this (Melistas et al. 2024 §3): on a
user's domain of real images these scores are skipped with the domain's reason, "real data has no
true counterfactual".
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.ground_truth import (
    score_ground_truth_error,
    score_ground_truth_perceptual,
    score_ground_truth_relative_error,
)
from cfcheck.kinds.scm.spec import truth_missing

pytestmark = pytest.mark.cfcheck_kind("scm")


def _needs_truth(result):
    """Skips the test, with the domain's reason, where the domain has no true counterfactual."""
    __tracebackhide__ = True
    reason = truth_missing(result.domain)
    if reason is not None:
        pytest.skip(reason)


def test_coverage(cfcheck_result, cfcheck_score):
    """Fraction of inputs the generator did not abstain on."""
    cfcheck_score("coverage", cfcheck_result.valid.float(), labels=cfcheck_result.sample_labels)


def test_ground_truth_error(cfcheck_result, cfcheck_score):
    """Mean absolute pixel difference to the true counterfactual, per image."""
    _needs_truth(cfcheck_result)
    score_ground_truth_error(cfcheck_result, cfcheck_score)


def test_ground_truth_perceptual(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """Perceptual distance (LPIPS formula, domain network) to the true counterfactual, per image."""
    _needs_truth(cfcheck_result)
    score_ground_truth_perceptual(cfcheck_result, cfcheck_score, cfcheck_evaluation_models)


def test_ground_truth_relative_error(cfcheck_result, cfcheck_score):
    """Pixel error to the true counterfactual relative to the input's own (0 = the truth, 1 = the input)."""
    _needs_truth(cfcheck_result)
    score_ground_truth_relative_error(cfcheck_result, cfcheck_score)
