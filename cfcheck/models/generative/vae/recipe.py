"""The recipe of a bundled conditional VAE: a :class:`~cfcheck.models.generative.GenerativeRecipe`.

A domain declares its image mechanism as a :class:`ConditionalVAERecipe`: the architecture, the
training configuration, how a split becomes (images, condition) and a ``measure_quality``
function that knows the domain's SCM and evaluation models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from ...builders import architecture, build_model
from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields
from ..diffusion.recipe import training_checkpoint
from .training import train_cvae

__all__ = ["ConditionalVAERecipe"]


@dataclass(frozen=True, kw_only=True)
class ConditionalVAERecipe(RecipeFields):
    """A conditional VAE image mechanism (implements :class:`~cfcheck.models.generative.GenerativeRecipe`);
    with ``architecture="conditional_hvae"`` (and its interface) the conditional hierarchical VAE.

    Attributes:
        name: model name within its domain.
        arch_kwargs: keyword arguments of the architecture's network.
        config: the training configuration (``options``: see
            :data:`~cfcheck.models.generative.vae.training.VAE_OPTIONS`).
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        columns: ``(data) -> (images N×C×32×32, condition N×k)``.
        measure_quality: ``(vae in eval mode, config) -> {metric: value}``.
        notes: lines for the card.
    """

    columns: Callable[[Any], tuple[torch.Tensor, torch.Tensor]] = field(compare=False)
    role: str = "image_mechanism"
    architecture: str = "conditional_vae"
    interface: str = ("encode(x, c) -> posterior mean and log-variance of z; decode(z, c) -> per-pixel Gaussian "
                      "mean (in [0, 1]) and standard deviation; counterfactual(x, c, c*) abducts z and the pixel "
                      "noise under c and decodes under c*. c: the parents as the domain encodes them.")

    #: the training values recorded with the measured quality
    final_keys: ClassVar[tuple[str, ...]] = ("final_nll", "final_kl")

    def fit(self, images: torch.Tensor, condition: torch.Tensor, config: GenerativeTrainConfig
            ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """The training loop: (state dict, training values); resumes from its checkpoint."""
        return train_cvae(images, condition, self.arch_kwargs, seed=config.seed, epochs=config.epochs,
                          batch_size=config.batch_size, lr=config.lr, options=config.options,
                          checkpoint=training_checkpoint(self.name, self.arch_kwargs, config),
                          network=architecture(self.architecture).factory)

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        """Trains on the (images, condition) of ``data`` with :meth:`fit`, then measures the quality."""
        images, condition = self.columns(data)
        if config.n is not None:
            images, condition = images[:config.n], condition[:config.n]
        state, info = self.fit(images, condition, config)
        network = build_model(self.architecture, **dict(self.arch_kwargs))
        network.load_state_dict(state)
        network.eval()
        with torch.no_grad():
            quality = {**{key: info[key] for key in self.final_keys}, **self.measure_quality(network, config)}
        return GenerativeTrainResult(state_dict=state, quality=quality, examples=int(images.shape[0]))
