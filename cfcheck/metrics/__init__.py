"""Pure metric functions and metric cards for counterfactual explanations.

Per-sample functions return one float32 value per image; set-level scores (FID, KID) take
feature matrices. Callers run the models and pass predictions, probabilities or images.
"""

from __future__ import annotations

from cfcheck.metrics._optional import OptionalDependencyError
from cfcheck.metrics.cards import CARDS, MetricCard, format_card, get_card
from cfcheck.metrics.closeness import elastic_net_distance, lpips_distance, minkowski_distance, perceptual_distance
from cfcheck.metrics.diversity import pairwise_diversity
from cfcheck.metrics.realism import fid, fid_torchmetrics, frechet_distance, kid, kid_torchmetrics
from cfcheck.metrics.sanity import ota_gain, randomisation_similarity
from cfcheck.metrics.stats import Summary, bootstrap_ci, bootstrap_set_ci, summarize
from cfcheck.metrics.validity import (
    class_changes,
    committee_vote,
    js_divergence,
    label_variation,
    oracle_agreement,
    oracle_target_hits,
    original_hits,
    target_hits,
)

__all__ = [
    "CARDS",
    "MetricCard",
    "OptionalDependencyError",
    "Summary",
    "bootstrap_ci",
    "bootstrap_set_ci",
    "class_changes",
    "committee_vote",
    "elastic_net_distance",
    "fid",
    "fid_torchmetrics",
    "format_card",
    "frechet_distance",
    "get_card",
    "js_divergence",
    "kid",
    "kid_torchmetrics",
    "label_variation",
    "lpips_distance",
    "minkowski_distance",
    "oracle_agreement",
    "oracle_target_hits",
    "ota_gain",
    "original_hits",
    "pairwise_diversity",
    "perceptual_distance",
    "randomisation_similarity",
    "summarize",
    "target_hits",
]
