"""Effectiveness: does the counterfactual show the intervened parent's new value? Read by the
anti-causal predictors, as Melistas et al. 2024 §3.2 do, and measured on the image itself, which
real data cannot offer. See ``cfcheck cards effectiveness_error`` and ``effectiveness_predictor_error``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.scm.effectiveness import score_parent

pytestmark = [pytest.mark.cfcheck_kind("scm"), pytest.mark.cfcheck_parents("intervened")]


def test_effectiveness(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """The intervened parent as the image shows it, against the value the intervention set."""
    score_parent(
        cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent, "effectiveness", by_predictor=False
    )


def test_effectiveness_predictors(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """The intervened parent as its anti-causal predictor reads it, against the value the intervention set."""
    score_parent(
        cfcheck_result,
        cfcheck_score,
        cfcheck_evaluation_models,
        cfcheck_parent,
        "effectiveness_predictor",
        by_predictor=True,
    )
