"""Reference models: architectures, deterministic training recipes, checksummed registry.

Import the submodules directly (``cfcheck.models.registry``, ``cfcheck.models.training``);
the most used names are re-exported here.
"""

from __future__ import annotations

from .architectures import ARCHITECTURES, build_model, count_parameters
from .cards import model_card_markdown
from .registry import (
    ReferenceModelError,
    available_models,
    load_manifest,
    load_model,
    model_entry,
    weights_dir,
)

__all__ = [
    "ARCHITECTURES",
    "ReferenceModelError",
    "available_models",
    "build_model",
    "count_parameters",
    "load_manifest",
    "load_model",
    "model_card_markdown",
    "model_entry",
    "weights_dir",
]
