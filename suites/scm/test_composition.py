"""Composition: the null intervention, applied m = 1 and 10 times, must return the input
(Melistas et al. 2024 §3.1). L1 in pixels, the perceptual distance on the domain network, and L1
of the anti-causal predictors' concatenated embeddings (or, where the predictors give no features,
of the domain embedding: :mod:`cfcheck.kinds.scm.roles`); see ``cfcheck cards composition_l1``. A
domain without the embedding role skips the scores that need it, saying so.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds import kind_spec
from cfcheck.kinds.calling import MethodOutputError
from cfcheck.kinds.scm.composition import CYCLES, composition_cycles
from cfcheck.kinds.scm.roles import composition_embedding, embedding_missing
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
        try:
            values = embedding_l1(composition_embedding(zoo, x), composition_embedding(zoo, composed))
        except KeyError as missing:
            pytest.skip(str(missing.args[0]))
    else:
        reason = embedding_missing(zoo, "the perceptual distance")
        if reason is not None:
            pytest.skip(reason)
        values = perceptual_distance(x.to(zoo.device), composed.to(zoo.device), zoo.feature_maps).cpu()
    cfcheck_score(key, values, labels={"input": kept.nonzero().flatten().tolist()})
