"""Ground truth: how far the method's counterfactual is from the true counterfactual, which
the domain computes from its SCM (keep every exogenous variable, apply the intervention,
propagate, re-render). No benchmark on real data can measure this (Melistas et al. 2024 §3).
"""

from __future__ import annotations

import pytest

from cfcheck.metrics.closeness import minkowski_distance

pytestmark = pytest.mark.cfcheck_kind("scm")


def test_coverage(cfcheck_result, cfcheck_score):
    """Fraction of inputs the generator did not abstain on."""
    cfcheck_score("coverage", cfcheck_result.valid.float(), labels=cfcheck_result.sample_labels)


def test_ground_truth_error(cfcheck_result, cfcheck_score):
    """Mean absolute pixel difference to the true counterfactual, per image."""
    keep = cfcheck_result.valid
    if not bool(keep.any()):
        cfcheck_score.unavailable("ground_truth_error", "the method abstained on every input")
    x_cf, truth = cfcheck_result.x_cf[keep], cfcheck_result.true_cf[keep]
    error = minkowski_distance(truth, x_cf, 1.0) / truth[0].numel()
    labels = {k: [v for v, m in zip(vs, keep.tolist()) if m] for k, vs in cfcheck_result.sample_labels.items()}
    cfcheck_score("ground_truth_error", error, labels=labels)
