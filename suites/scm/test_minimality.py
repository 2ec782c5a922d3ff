"""Minimality: CLD, the Counterfactual Latent Divergence (Melistas et al. 2024 §3.2, eq. 9), with
w1 = 0.8, w2 = 0.2, continuous parents in 10 bins and the KL divergence between the Gaussian
posteriors of the domain's unconditional VAE (means and log-variances). Recorded with its two
probabilities, as their Table 5 reports them. See ``cfcheck cards cld``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.scm.minimality import cld_scores

pytestmark = pytest.mark.cfcheck_kind("scm")


@pytest.mark.parametrize("metric", ["cld", "cld_p_counterfactual", "cld_p_factual"])
def test_minimality(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_session, metric):
    """CLD per counterfactual, or one of its probabilities P(S_x* ≤ div), P(S_x ≥ div)."""
    keep = cfcheck_result.valid
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(metric, "the method abstained on every input")
    try:
        _ = cfcheck_evaluation_models.minimality_vae  # loads it, or names what the domain lacks
    except KeyError as error:
        pytest.skip(str(error))
    cld, p_counterfactual, p_factual = cfcheck_session.memo(  # once per task for the three scores
        ("scm-cld", cfcheck_result.task), lambda: cld_scores(cfcheck_result, cfcheck_evaluation_models)
    )
    values = {"cld": cld, "cld_p_counterfactual": p_counterfactual, "cld_p_factual": p_factual}[metric]
    cfcheck_score(metric, values, labels=labels_where(cfcheck_result.sample_labels, keep))
