"""Conditional GAN image mechanisms of an SCM, with an encoder for abduction (Melistas et al. 2024).

Importing this package registers the ``"conditional_gan"`` architecture (family ``"gan"``).
"""

from __future__ import annotations

from ..base import register_generative_architecture
from .network import ConditionalGAN
from .recipe import ConditionalGANRecipe
from .training import GAN_OPTIONS, train_cgan

__all__ = ["GAN_OPTIONS", "ConditionalGAN", "ConditionalGANRecipe", "train_cgan"]

register_generative_architecture("conditional_gan", ConditionalGAN, family="gan", input_shape=None, replace=True)
