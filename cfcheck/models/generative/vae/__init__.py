"""Conditional VAE image mechanisms of an SCM (Deep-SCM; Melistas et al. 2024).

Importing this package registers the ``"conditional_vae"``, ``"conditional_hvae"`` and ``"unconditional_vae"``
architectures (family ``"vae"``); the unconditional one is the CLD minimality distance's.
"""

from __future__ import annotations

from ..base import register_generative_architecture
from .hierarchical import ConditionalHVAE
from .network import ConditionalVAE
from .recipe import ConditionalVAERecipe
from .training import VAE_OPTIONS, train_cvae
from .unconditional import UnconditionalVAE, UnconditionalVAERecipe, train_unconditional_vae

__all__ = [
    "VAE_OPTIONS",
    "ConditionalHVAE",
    "ConditionalVAE",
    "ConditionalVAERecipe",
    "UnconditionalVAE",
    "UnconditionalVAERecipe",
    "train_cvae",
    "train_unconditional_vae",
]

register_generative_architecture("conditional_vae", ConditionalVAE, family="vae", input_shape=None, replace=True)
register_generative_architecture("conditional_hvae", ConditionalHVAE, family="vae", input_shape=None, replace=True)
