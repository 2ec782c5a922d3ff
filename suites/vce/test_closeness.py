"""Closeness: how little the counterfactual changes its input (Väth et al. 2023 §3.2;
Hvilshøj et al. 2021 §3.1-3.2).

Distances are computed per image and then averaged, over the inputs the method did not
abstain on. Pixel distances (D1, D1.5, D2, elastic net) are reported for comparability with
the literature; the perceptual distance (the LPIPS formula on the domain embedding network)
is the recommended one. Unrelated attributes (those the domain's attribute oracles read)
must not change when the class is the target: their Label Variation Score stays low.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.base import labels_where
from cfcheck.kinds.vce.spec import unrelated_attributes
from cfcheck.metrics._optional import OptionalDependencyError
from cfcheck.metrics.closeness import (
    attribute_changes,
    elastic_net_distance,
    lpips_distance,
    minkowski_distance,
    perceptual_distance,
)
from cfcheck.metrics.diversity import pairwise_diversity
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.validity import label_variation

pytestmark = pytest.mark.cfcheck_kind("vce")

MINKOWSKI = {"d1": 1.0, "d1_5": 1.5, "d2": 2.0}


def _produced(result):
    """Counterfactuals the method produced (abstentions excluded) and their inputs."""
    keep = result.valid
    return result.x[keep], result.x_cf[keep], labels_where(result.sample_labels, keep)


def _require_some(x, score, metric):
    if len(x) == 0:
        score.unavailable(metric, "the method abstained on every input; nothing to measure")


@pytest.mark.parametrize("metric", sorted(MINKOWSKI))
def test_minkowski_distance(cfcheck_result, cfcheck_score, metric):
    """D_p = ||x − c||_p per image, p ∈ {1, 1.5, 2}, pixels in [0, 1]."""
    x, cf, labels = _produced(cfcheck_result)
    _require_some(x, cfcheck_score, metric)
    cfcheck_score(metric, minkowski_distance(x, cf, MINKOWSKI[metric]), labels=labels)


def test_elastic_net_distance(cfcheck_result, cfcheck_score):
    """EN = ||x − c||₁ + ||x − c||₂ (Hvilshøj et al.)."""
    x, cf, labels = _produced(cfcheck_result)
    _require_some(x, cfcheck_score, "elastic_net")
    cfcheck_score("elastic_net", elastic_net_distance(x, cf), labels=labels)


def test_perceptual_distance(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """LPIPS formula (unit-normalised activations, uniform weights) on the domain network."""
    x, cf, labels = _produced(cfcheck_result)
    _require_some(x, cfcheck_score, "perceptual_distance")
    zoo = cfcheck_evaluation_models
    distances = perceptual_distance(x.to(zoo.device), cf.to(zoo.device), zoo.feature_maps)
    cfcheck_score("perceptual_distance", distances.cpu(), labels=labels)


def test_lpips(cfcheck_result, cfcheck_score):
    """Real LPIPS (AlexNet) through the optional ``lpips`` backend."""
    x, cf, labels = _produced(cfcheck_result)
    _require_some(x, cfcheck_score, "lpips")
    try:
        distances = lpips_distance(x, cf, net="alex")
    except OptionalDependencyError as error:
        pytest.skip(str(error))
    cfcheck_score("lpips", distances, labels=labels)


def test_label_variation_unrelated(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, cfcheck_attribute):
    """LVS of an attribute the counterfactual should leave alone."""
    keep, metric = cfcheck_result.valid, MetricKey("lvs_unrelated", cfcheck_attribute)
    _require_some(cfcheck_result.x[keep], cfcheck_score, metric)
    oracle = cfcheck_evaluation_models.attribute_oracles[cfcheck_attribute]
    lvs = label_variation(cfcheck_result.probabilities(oracle, on="x"), cfcheck_result.probabilities(oracle))
    labels = labels_where(cfcheck_result.sample_labels, keep)
    cfcheck_score(metric, lvs[keep], labels=labels)


def test_attribute_changes(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """MNAC: how many unrelated attributes the attribute oracles see change."""
    keep = cfcheck_result.valid
    if not unrelated_attributes(cfcheck_evaluation_models):
        pytest.skip(f"domain {cfcheck_evaluation_models.domain.name!r} has no attribute oracles besides the class's")
    _require_some(cfcheck_result.x[keep], cfcheck_score, "mnac")
    oracles = [cfcheck_evaluation_models.attribute_oracles[a] for a in unrelated_attributes(cfcheck_evaluation_models)]
    changes = attribute_changes(
        [cfcheck_result.predictions(o, on="x") for o in oracles], [cfcheck_result.predictions(o) for o in oracles]
    )
    labels = labels_where(cfcheck_result.sample_labels, keep)
    cfcheck_score("mnac", changes[keep], labels=labels)


def test_diversity(cfcheck_result, cfcheck_score, cfcheck_evaluation_models):
    """Mean pairwise perceptual distance among several counterfactuals of one input."""
    if cfcheck_result.num_counterfactuals < 2:
        pytest.skip("the method returns one counterfactual per input; diversity needs several")
    keep = cfcheck_result.valid
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable("diversity", "the method abstained on every input; nothing to measure")
    cfs = cfcheck_result.cfs[keep].to(cfcheck_evaluation_models.device)
    feature_maps = cfcheck_evaluation_models.feature_maps
    diversity = pairwise_diversity(cfs, lambda a, b: perceptual_distance(a, b, feature_maps))
    cfcheck_score("diversity", diversity.cpu())
