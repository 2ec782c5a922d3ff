"""The recipe of a bundled conditional GAN image mechanism: a :class:`~cfcheck.models.generative.GenerativeRecipe`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields
from .network import ConditionalGAN
from .training import train_cgan

__all__ = ["ConditionalGANRecipe"]


@dataclass(frozen=True, kw_only=True)
class ConditionalGANRecipe(RecipeFields):
    """A conditional GAN with an encoder (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes: those of :class:`~cfcheck.models.generative.vae.ConditionalVAERecipe` (``config.options``:
    :data:`~cfcheck.models.generative.gan.training.GAN_OPTIONS`); ``measure_quality`` receives the
    network in eval mode.
    """

    columns: Callable[[Any], tuple[torch.Tensor, torch.Tensor]] = field(compare=False)
    role: str = "image_mechanism"
    architecture: str = "conditional_gan"
    interface: str = ("encode(x, c) -> the abducted latent z = E(x, c); decode(z, c) -> the generated image G(z, c) "
                      "in [0, 1]; discriminate(x, z, c) -> D's logit; counterfactual(x, c, c*) = G(E(x, c), c*). "
                      "c: the parents as the domain encodes them.")

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        """Trains on the (images, condition) of ``data``: adversarial phase, then encoder fine-tuning."""
        images, condition = self.columns(data)
        if config.n is not None:
            images, condition = images[:config.n], condition[:config.n]
        state, info = train_cgan(images, condition, self.arch_kwargs, seed=config.seed, epochs=config.epochs,
                                 batch_size=config.batch_size, lr=config.lr, options=config.options)
        gan = ConditionalGAN(**dict(self.arch_kwargs))
        gan.load_state_dict(state)
        gan.eval()
        with torch.no_grad():
            quality = {"final_d_loss": info["final_d_loss"], "final_g_loss": info["final_g_loss"],
                       "final_cycle": info["final_cycle"], **self.measure_quality(gan, config)}
        return GenerativeTrainResult(state_dict=state, quality=quality, examples=int(images.shape[0]))
