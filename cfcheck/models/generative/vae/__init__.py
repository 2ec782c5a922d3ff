"""Conditional VAE image mechanisms of an SCM (Deep-SCM; Melistas et al. 2024).

Importing this package registers the ``"conditional_vae"`` architecture (family ``"vae"``).
"""

from __future__ import annotations

from ..base import register_generative_architecture
from .network import ConditionalVAE
from .recipe import ConditionalVAERecipe
from .training import VAE_OPTIONS, train_cvae

__all__ = ["VAE_OPTIONS", "ConditionalVAE", "ConditionalVAERecipe", "train_cvae"]

register_generative_architecture("conditional_vae", ConditionalVAE, family="vae", input_shape=None, replace=True)
