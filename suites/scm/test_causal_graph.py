"""Causal-graph compliance: the parents the intervention did not set show the values the SCM
implies: a child of the intervened parent moves as its mechanism says, every other parent
keeps its value. Measured on the image and read by the anti-causal predictors (Melistas et al.
2024 Table 3's off-diagonal columns). See ``cfcheck cards preservation_error``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.scm.effectiveness import score_parent

pytestmark = [pytest.mark.cfcheck_kind("scm"), pytest.mark.cfcheck_parents("others")]


def test_other_parents(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """A parent the intervention did not set, as the image shows it, against the SCM's value."""
    score_parent(
        cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent, "preservation", by_predictor=False
    )


def test_other_parents_predictors(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """A parent the intervention did not set, as its anti-causal predictor reads it, against the SCM's value."""
    score_parent(
        cfcheck_result,
        cfcheck_score,
        cfcheck_evaluation_models,
        cfcheck_parent,
        "preservation_predictor",
        by_predictor=True,
    )
