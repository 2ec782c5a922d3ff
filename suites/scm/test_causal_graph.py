"""Causal-graph compliance: the parents the intervention did not set show the values the SCM
implies: a child of the intervened parent moves as its mechanism says (morpho: intensity
under do(thickness)), every other parent keeps its value (thickness under do(intensity), both
under do(digit)). Measured on the image and read by the anti-causal predictors (Melistas et al.
2024 Table 3's off-diagonal columns). See ``cfcheck cards preservation_error``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.scm.effectiveness import parent_agreement, predictor_agreement

pytestmark = [pytest.mark.cfcheck_kind("scm"), pytest.mark.cfcheck_parents("others")]


def test_other_parents(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """A parent the intervention did not set, as the image shows it, against the SCM's value."""
    keep = cfcheck_result.valid
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(f"preservation_error:{cfcheck_parent}", "the method abstained on every input")
    kind, values = parent_agreement(cfcheck_result, cfcheck_evaluation_models, cfcheck_parent)
    cfcheck_score(f"preservation_{kind}:{cfcheck_parent}", values,
                  labels=labels_where(cfcheck_result.sample_labels, keep))


def test_other_parents_predictors(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """A parent the intervention did not set, as its anti-causal predictor reads it, against the SCM's value."""
    keep = cfcheck_result.valid
    zoo = cfcheck_evaluation_models
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(f"preservation_predictor_error:{cfcheck_parent}", "the method abstained on every input")
    if cfcheck_parent not in zoo.anticausal_predictors:
        pytest.skip(f"{cfcheck_result.domain.name} bundles no anti-causal predictor of {cfcheck_parent}")
    kind, values = predictor_agreement(cfcheck_result, zoo, cfcheck_parent)
    cfcheck_score(f"preservation_predictor_{kind}:{cfcheck_parent}", values,
                  labels=labels_where(cfcheck_result.sample_labels, keep))
