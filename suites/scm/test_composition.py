"""Composition: the null intervention, applied m = 1 and 10 times, must return the input
(Melistas et al. 2024 §3.1). L1 in pixels, the perceptual distance on the domain network, and L1
of the anti-causal predictors' concatenated embeddings; see ``cfcheck cards composition_l1``.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds import kind_spec
from cfcheck.kinds.calling import MethodOutputError
from cfcheck.kinds.scm.composition import CYCLES, composition_cycles
from cfcheck.metrics.closeness import minkowski_distance, perceptual_distance
from cfcheck.metrics.composition import embedding_l1
from cfcheck.metrics.key import MetricKey

pytestmark = pytest.mark.cfcheck_kind("scm")


@pytest.mark.parametrize("metric", ["composition_l1", "composition_perceptual", "composition_embedding"])
@pytest.mark.parametrize("cycles", CYCLES)
def test_composition(
    cfcheck_task, cfcheck_method, cfcheck_session, cfcheck_score, cfcheck_evaluation_models, metric, cycles
):
    """Distance between the input and its image after ``cycles`` null interventions."""
    __tracebackhide__ = True
    key = MetricKey(metric, f"m{cycles}")  # the variant names the cycles: m1, m2, ...
    try:
        found = composition_cycles(cfcheck_session, cfcheck_task, cfcheck_method)
    except MethodOutputError as error:
        cfcheck_score.unavailable(key, error.summary)
    x = kind_spec("scm").inputs(cfcheck_session, cfcheck_task).arguments["x"]
    composed, kept = found[cycles]
    if int(kept.sum()) == 0:
        cfcheck_score.unavailable(key, "the method abstained on every input")
    x, composed = x[kept], composed[kept]
    zoo = cfcheck_evaluation_models
    if metric == "composition_l1":
        values = minkowski_distance(x, composed, 1) / x[0].numel()
    elif metric == "composition_embedding":
        if not zoo.anticausal_predictors:
            pytest.skip("the domain bundles no anti-causal predictors")
        values = embedding_l1(zoo.predictor_embedding(x), zoo.predictor_embedding(composed))
    else:
        values = perceptual_distance(x.to(zoo.device), composed.to(zoo.device), zoo.feature_maps).cpu()
    cfcheck_score(key, values, labels={"input": kept.nonzero().flatten().tolist()})
