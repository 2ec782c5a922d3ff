"""Effectiveness: does the counterfactual show the intervened parent's new value? Read by the
anti-causal predictors, as Melistas et al. 2024 §3.2 do, and measured on the image itself, which
real data cannot offer. See ``cfcheck cards effectiveness_error`` and ``effectiveness_predictor_error``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.scm.effectiveness import parent_agreement, predictor_agreement

pytestmark = [pytest.mark.cfcheck_kind("scm"), pytest.mark.cfcheck_parents("intervened")]


def test_effectiveness(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """The intervened parent as the image shows it, against the value the intervention set."""
    keep = cfcheck_result.valid
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(f"effectiveness_error:{cfcheck_parent}", "the method abstained on every input")
    kind, values = parent_agreement(cfcheck_result, cfcheck_evaluation_models, cfcheck_parent)
    cfcheck_score(f"effectiveness_{kind}:{cfcheck_parent}", values,
                  labels=labels_where(cfcheck_result.sample_labels, keep))


def test_effectiveness_predictors(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_parent):
    """The intervened parent as its anti-causal predictor reads it, against the value the intervention set."""
    keep = cfcheck_result.valid
    zoo = cfcheck_evaluation_models
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(f"effectiveness_predictor_error:{cfcheck_parent}", "the method abstained on every input")
    if cfcheck_parent not in zoo.anticausal_predictors:
        pytest.skip(f"{cfcheck_result.domain.name} bundles no anti-causal predictor of {cfcheck_parent}")
    kind, values = predictor_agreement(cfcheck_result, zoo, cfcheck_parent)
    cfcheck_score(f"effectiveness_predictor_{kind}:{cfcheck_parent}", values,
                  labels=labels_where(cfcheck_result.sample_labels, keep))
