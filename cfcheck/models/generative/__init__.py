"""Generative reference models: diffusion (DDPM UNet), normalizing flows, VAE / HVAE, GAN.

None is bundled yet. This package defines how one plugs in (see :mod:`.base`): register the
network with :func:`register_generative_architecture` so the registry can build it from a
manifest entry, and implement :class:`GenerativeRecipe` (``train(config, data)`` ->
:class:`GenerativeTrainResult`, ``smoke_config()``) so :func:`train_generative_model` can
train it into verified weights and a manifest entry. Each family gets its own sub-package
here (``diffusion/``, ``flow/``, ``vae/``, ``gan/``) whose import registers its architectures.
"""

from __future__ import annotations

from . import autoencoder, diffusion, flow, gan, vae  # noqa: E402  (register their architectures)
from .base import (
    GENERATIVE_FAMILIES,
    GenerativeRecipe,
    GenerativeTrainConfig,
    GenerativeTrainResult,
    register_generative_architecture,
    train_generative_model,
    train_generative_models,
)

__all__ = [
    "GENERATIVE_FAMILIES",
    "autoencoder",
    "diffusion",
    "flow",
    "gan",
    "vae",
    "GenerativeRecipe",
    "GenerativeTrainConfig",
    "GenerativeTrainResult",
    "register_generative_architecture",
    "train_generative_model",
    "train_generative_models",
]
