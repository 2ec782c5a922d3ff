"""gmm: Park et al.'s (2023) two-class Gaussian mixture in 64 dimensions, with its exact
diffusion denoiser (a perfect stand-in for a trained diffusion model)."""

from __future__ import annotations

from .denoiser import posterior_mean, predicted_noise, responsibilities
from .domain import GMMDomain
from .mixture import DIM, SPLIT_SEEDS, SPLIT_SIZES, VARIANCE, LabeledPoints, default_means, sample_mixture

__all__ = [
    "DIM",
    "SPLIT_SEEDS",
    "SPLIT_SIZES",
    "VARIANCE",
    "GMMDomain",
    "LabeledPoints",
    "default_means",
    "posterior_mean",
    "predicted_noise",
    "responsibilities",
    "sample_mixture",
]
