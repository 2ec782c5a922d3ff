"""Ground truth: how far each counterfactual is from the domain's true counterfactual of the
same input under do(class = target): the same style and exogenous factors re-rendered with
the target class, the answer an ideal explainer would give. Only a domain with an SCM can
compute it; no benchmark on real data can report these scores (Melistas et al. 2024 §3).
Abstentions are left out (coverage is reported by the validity suite).
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.ground_truth import (
    score_ground_truth_error,
    score_ground_truth_perceptual,
    score_ground_truth_relative_error,
)

pytestmark = pytest.mark.cfcheck_kind("vce")


def test_ground_truth_error(cfcheck_result, cfcheck_score):
    """Mean absolute pixel difference to the true counterfactual, per image."""
    score_ground_truth_error(cfcheck_result, cfcheck_score)


def test_ground_truth_perceptual(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """Perceptual distance (LPIPS formula, domain network) to the true counterfactual, per image."""
    score_ground_truth_perceptual(cfcheck_result, cfcheck_score, cfcheck_evaluation_models)


def test_ground_truth_relative_error(cfcheck_result, cfcheck_score):
    """Pixel error to the true counterfactual relative to the input's own (0 = the truth, 1 = the input)."""
    score_ground_truth_relative_error(cfcheck_result, cfcheck_score)
