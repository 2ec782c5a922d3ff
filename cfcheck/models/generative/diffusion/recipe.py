"""The recipe of a bundled DDPM: a :class:`~cfcheck.models.generative.GenerativeRecipe`.

A domain declares its diffusion model as a :class:`DiffusionRecipe` (architecture settings,
training configuration, quality bar and a ``measure_quality`` function that knows the domain's
evaluation models); :func:`cfcheck.models.generative.train_generative_model` turns it into
verified weights and a manifest entry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields
from .network import DenoisingUNet
from .training import train_denoiser

__all__ = ["DiffusionRecipe", "training_checkpoint"]


def training_checkpoint(
    name: str, arch_kwargs: Mapping[str, Any], config: GenerativeTrainConfig, directory: Path | None = None
) -> Path:
    """Where the training of ``name`` under ``config`` checkpoints (keyed by both settings)."""
    from cfcheck.core.cache import default_cache_dir

    settings = json.dumps({"arch": dict(arch_kwargs), "config": config.to_dict()}, sort_keys=True)
    key = hashlib.sha256(settings.encode()).hexdigest()[:16]
    return (directory or default_cache_dir() / "training") / f"{name}-{key}.pt"


@dataclass(frozen=True, kw_only=True)
class DiffusionRecipe(RecipeFields):
    """A DDPM recipe (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes:
        name: model name within its domain.
        arch_kwargs: keyword arguments of :class:`DenoisingUNet`.
        config: the training configuration (``options``: see
            :data:`~cfcheck.models.generative.diffusion.training.DIFFUSION_OPTIONS`).
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        measure_quality: ``(network in eval mode, config) -> {metric: value}``; the domain's
            own evaluation (sample realism, class balance, factor distributions).
        notes: lines for the card: what the quality values mean, how the bars were chosen.
        role: the manifest role.
        architecture: the registered architecture name.
    """

    role: str = "diffusion"
    architecture: str = "ddpm_unet"
    interface: str = (
        "predicts the noise ε̂(x_t, t) of a noisy batch x_t in diffusion space [-1, 1] "
        "(images x map to 2x − 1) at integer timesteps t; the schedule is rebuilt from arch_kwargs."
    )

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        """Trains on ``data.images`` (or an image tensor), resuming from its checkpoint."""
        images = data.images if hasattr(data, "images") else data
        if config.n is not None:
            images = images[: config.n]
        state, info = train_denoiser(
            images,
            self.arch_kwargs,
            seed=config.seed,
            epochs=config.epochs,
            batch_size=config.batch_size,
            lr=config.lr,
            options=config.options,
            checkpoint=training_checkpoint(self.name, self.arch_kwargs, config),
        )
        network = DenoisingUNet(**dict(self.arch_kwargs))
        network.load_state_dict(state)
        network.eval()
        with torch.no_grad():
            quality = {"final_loss": info["final_loss"], **self.measure_quality(network, config)}
        return GenerativeTrainResult(state_dict=state, quality=quality)
