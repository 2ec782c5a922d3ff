"""Diffusion reference models: a ``diffusers`` UNet with its DDPM/DDIM schedules.

Importing this package registers the ``"ddpm_unet"`` architecture (family ``"diffusion"``).
"""

from __future__ import annotations

from ..base import register_generative_architecture
from .network import DenoisingUNet, to_diffusion_space, to_image_space
from .recipe import DiffusionRecipe, training_checkpoint

__all__ = ["DenoisingUNet", "DiffusionRecipe", "to_diffusion_space", "to_image_space", "training_checkpoint"]

register_generative_architecture("ddpm_unet", DenoisingUNet, family="diffusion", input_shape=None, replace=True)
