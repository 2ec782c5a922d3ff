"""The recipe of a bundled conditional GAN image mechanism: a :class:`~cfcheck.models.generative.GenerativeRecipe`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from ..base import GenerativeTrainConfig
from ..vae.recipe import ConditionalVAERecipe
from .training import train_cgan

__all__ = ["ConditionalGANRecipe"]


@dataclass(frozen=True, kw_only=True)
class ConditionalGANRecipe(ConditionalVAERecipe):
    """A conditional GAN with an encoder (implements :class:`~cfcheck.models.generative.GenerativeRecipe`):
    the fields of :class:`~cfcheck.models.generative.vae.ConditionalVAERecipe`, trained by
    :func:`~cfcheck.models.generative.gan.training.train_cgan` (``config.options``:
    :data:`~cfcheck.models.generative.gan.training.GAN_OPTIONS`)."""

    architecture: str = "conditional_gan"
    interface: str = (
        "encode(x, c) -> the abducted latent z = E(x, c); decode(z, c) -> the generated image G(z, c) "
        "in [0, 1]; discriminate(x, z, c) -> D's logit; counterfactual(x, c, c*) = G(E(x, c), c*). "
        "c: the parents as the domain encodes them."
    )
    final_keys: ClassVar[tuple[str, ...]] = ("final_d_loss", "final_g_loss", "final_cycle")

    def fit(
        self, images: torch.Tensor, condition: torch.Tensor, config: GenerativeTrainConfig
    ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """The adversarial phase, the encoder's fine-tuning on the cyclic cost, then (``counterfactual_epochs``)
        the counterfactual fine-tuning of encoder and generator (:func:`~cfcheck.models.generative.gan.train_cgan`)."""
        return train_cgan(
            images,
            condition,
            self.arch_kwargs,
            seed=config.seed,
            epochs=config.epochs,
            batch_size=config.batch_size,
            lr=config.lr,
            options=config.options,
        )
