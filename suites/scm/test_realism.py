"""Realism: do the counterfactuals look like real images with the parents the intervention
implies? FID and KID on the domain embedding against images the domain renders with exactly the
counterfactual parents and fresh styles (on a user's domain of real images: real images whose
attributes match the counterfactual's), judged against real-vs-real floors at the same n
(see :mod:`cfcheck.kinds.scm.realism` and ``cfcheck cards scm_fid``)."""

from __future__ import annotations

import pytest

from cfcheck.core.set_features import SetFeatures
from cfcheck.kinds.base import labels_where
from cfcheck.kinds.scm.realism import reference_missing, scm_realism, scm_realism_sets
from cfcheck.kinds.scm.roles import embedding_missing
from cfcheck.metrics.reference_sets import REALISM_STATISTICS

pytestmark = pytest.mark.cfcheck_kind("scm")

#: FID/KID are recomputed per resample.
SET_BOOTSTRAP_RESAMPLES = 200
STATISTICS = {"scm_fid": REALISM_STATISTICS["fid"], "scm_kid": REALISM_STATISTICS["kid"]}


@pytest.mark.parametrize("metric", sorted(STATISTICS))
def test_realism(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_evaluation_models, metric):
    statistic, ci_method = STATISTICS[metric]
    reason = embedding_missing(cfcheck_evaluation_models, "realism (FID and KID)")
    if reason is not None:
        pytest.skip(reason)
    reason = reference_missing(cfcheck_result)  # also a warning of the domain's load check
    if reason is not None:
        pytest.skip(reason)
    try:
        score = scm_realism(
            cfcheck_result,
            cfcheck_evaluation_models,
            statistic,
            ci_method=ci_method,
            n_resamples=min(SET_BOOTSTRAP_RESAMPLES, cfcheck_session.profile.bootstrap_resamples),
        )
    except ValueError as error:
        cfcheck_score.unavailable(metric, str(error))
    sets = scm_realism_sets(cfcheck_result, cfcheck_evaluation_models)
    inputs = labels_where(cfcheck_result.sample_labels, cfcheck_result.valid)["input"]
    cfcheck_score(
        metric,
        value=score.value,
        ci=score.ci,
        n=score.n,
        floor=score.floor_max,
        extra={
            "real_floor": score.floors,
            "classes_skipped": score.classes_skipped,
            **({} if sets.exact_match is None else {"reference_exact_match": round(sets.exact_match, 4)}),
        },
        set_features=cfcheck_result.evaluated(
            "kept features for paired tests",
            lambda: SetFeatures.draw(
                sets.fake_features,
                sets.fake_classes,
                inputs,
                sets.real_features,
                sets.real_classes,
                seed=cfcheck_result.task.seed,
            ),
        ),
    )
