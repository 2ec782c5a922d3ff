"""Reference models, by role, over one checksummed registry of per-domain manifests.

- :mod:`cfcheck.models.registry`: loading with sha256 verification; one
  ``reference_models/<domain>/manifest.json`` per domain.
- :mod:`cfcheck.models.builders`: the architectures the registry can build, of every family.
- :mod:`cfcheck.models.classifiers`: the 32×32 classifiers, oracles, attribute oracles and
  the embedding network, with their deterministic recipes, training and evaluation.
- :mod:`cfcheck.models.generative`: how diffusion, flow, VAE and GAN models plug in
  (architecture registration, the recipe protocol).
- :mod:`cfcheck.models.inference`: batched, gradient-free inference.
- :mod:`cfcheck.models.model_cards`: model cards generated from the manifest (the metric cards
  are :mod:`cfcheck.metrics.cards`).

Import the submodules directly; the most used names are re-exported here.
"""

from __future__ import annotations

from .builders import build_model, register_architecture
from .classifiers.architectures import ARCHITECTURES, count_parameters
from .model_cards import model_card_markdown
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
    "register_architecture",
    "weights_dir",
]
