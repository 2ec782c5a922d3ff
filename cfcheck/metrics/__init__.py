"""Pure metric functions and metric cards for counterfactual explanations.

Per-sample functions return one float32 value per image; set-level scores (FID, KID) take
feature matrices. Callers run the models and pass predictions, probabilities or images.
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> module; imported on first use, so reading the metric cards (which the pytest plugin
#: does at start-up, for the profiles) does not import torch.
_EXPORTS = {
    "CARDS": "cfcheck.metrics.cards",
    "MetricCard": "cfcheck.metrics.cards",
    "MetricKey": "cfcheck.metrics.key",
    "UnknownMetricKey": "cfcheck.metrics.cards",
    "card_of": "cfcheck.metrics.cards",
    "OptionalDependencyError": "cfcheck.metrics._optional",
    "Summary": "cfcheck.metrics.stats",
    "bootstrap_ci": "cfcheck.metrics.stats",
    "bootstrap_set_ci": "cfcheck.metrics.set_intervals",
    "crossed_interval": "cfcheck.metrics.stats",
    "class_changes": "cfcheck.metrics.validity",
    "Bar": "cfcheck.metrics.cards",
    "committee_target_hits": "cfcheck.metrics.validity",
    "verdict": "cfcheck.metrics.stats",
    "wilson_interval": "cfcheck.metrics.stats",
    "elastic_net_distance": "cfcheck.metrics.closeness",
    "attribute_changes": "cfcheck.metrics.closeness",
    "ground_truth_error": "cfcheck.metrics.closeness",
    "ground_truth_relative_error": "cfcheck.metrics.closeness",
    "counterfactual_transition": "cfcheck.metrics.transition",
    "kid_all_pairs": "cfcheck.metrics.set_statistics",
    "fid": "cfcheck.metrics.realism",
    "fid_torchmetrics": "cfcheck.metrics.realism",
    "format_card": "cfcheck.metrics.cards",
    "frechet_distance": "cfcheck.metrics.realism",
    "get_card": "cfcheck.metrics.cards",
    "js_divergence": "cfcheck.metrics.validity",
    "kid": "cfcheck.metrics.realism",
    "kid_torchmetrics": "cfcheck.metrics.realism",
    "label_variation": "cfcheck.metrics.validity",
    "label_variation_toward": "cfcheck.metrics.validity",
    "categorical_hits": "cfcheck.metrics.effectiveness",
    "im1": "cfcheck.metrics.interpretability",
    "im2": "cfcheck.metrics.interpretability",
    "lpips_distance": "cfcheck.metrics.closeness",
    "minkowski_distance": "cfcheck.metrics.closeness",
    "oracle_agreement": "cfcheck.metrics.validity",
    "oracle_target_hits": "cfcheck.metrics.validity",
    "original_hits": "cfcheck.metrics.validity",
    "ota_gain": "cfcheck.metrics.sanity",
    "standardised_error": "cfcheck.metrics.effectiveness",
    "pairwise_diversity": "cfcheck.metrics.diversity",
    "perceptual_distance": "cfcheck.metrics.closeness",
    "randomisation_similarity": "cfcheck.metrics.sanity",
    "summarize": "cfcheck.metrics.stats",
    "target_hits": "cfcheck.metrics.validity",
    "CategoricalGroup": "cfcheck.metrics.synbols",
    "LatentLayout": "cfcheck.metrics.synbols",
    "flip_categories": "cfcheck.metrics.synbols",
    "greedy_orthogonal_set": "cfcheck.metrics.orthogonal_set",
    "synbols_scores": "cfcheck.metrics.synbols",
}

__all__ = [
    "CARDS",
    "MetricCard",
    "MetricKey",
    "UnknownMetricKey",
    "card_of",
    "OptionalDependencyError",
    "Summary",
    "bootstrap_ci",
    "bootstrap_set_ci",
    "crossed_interval",
    "categorical_hits",
    "class_changes",
    "im1",
    "im2",
    "Bar",
    "committee_target_hits",
    "verdict",
    "wilson_interval",
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
    "label_variation_toward",
    "lpips_distance",
    "minkowski_distance",
    "oracle_agreement",
    "oracle_target_hits",
    "ota_gain",
    "original_hits",
    "pairwise_diversity",
    "perceptual_distance",
    "randomisation_similarity",
    "standardised_error",
    "summarize",
    "target_hits",
    "CategoricalGroup",
    "LatentLayout",
    "flip_categories",
    "greedy_orthogonal_set",
    "synbols_scores",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cfcheck.metrics' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
