"""Pure metric functions and metric cards for counterfactual explanations.

Per-sample functions return one float32 value per image; set-level scores (FID, KID) take
feature matrices. Callers run the models and pass predictions, probabilities or images.

The names below are this package's one export list: ``__all__`` and the lazy attribute lookup are
both read off :data:`_EXPORTS`, so they cannot disagree.
"""

from __future__ import annotations

import importlib
from typing import Any

#: submodule -> the names it exports here; imported on first use, so reading the metric cards
#: (which the pytest plugin does at start-up, for the profiles) does not import torch.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_optional": ("OptionalDependencyError",),
    "cards": (
        "Bar",
        "CARDS",
        "MetricCard",
        "UnknownMetricKey",
        "card_of",
        "card_owner",
        "close_cards_hint",
        "format_card",
        "get_card",
        "register_cards",
    ),
    "closeness": (
        "attribute_changes",
        "elastic_net_distance",
        "ground_truth_error",
        "ground_truth_relative_error",
        "lpips_distance",
        "minkowski_distance",
        "perceptual_distance",
    ),
    "diversity": ("pairwise_diversity",),
    "effectiveness": ("categorical_hits", "standardised_error"),
    "interpretability": ("im1", "im2"),
    "key": ("MetricKey",),
    "orthogonal_set": ("greedy_orthogonal_set",),
    "realism": ("fid", "fid_torchmetrics", "frechet_distance", "kid", "kid_torchmetrics"),
    "sanity": ("ota_gain", "randomisation_similarity"),
    "set_intervals": ("bootstrap_set_ci",),
    "set_statistics": ("kid_all_pairs",),
    "stats": ("Summary", "bootstrap_ci", "crossed_interval", "summarize", "verdict", "wilson_interval"),
    "synbols": ("CategoricalGroup", "LatentLayout", "flip_categories", "synbols_scores"),
    "transition": ("counterfactual_transition",),
    "validity": (
        "class_changes",
        "committee_target_hits",
        "js_divergence",
        "label_variation",
        "label_variation_toward",
        "oracle_agreement",
        "oracle_target_hits",
        "original_hits",
        "target_hits",
    ),
}
#: exported name -> the submodule defining it
_MODULE_OF: dict[str, str] = {name: f"{__name__}.{module}" for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)  # read off _EXPORTS, the one list


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
