"""The recipe of a bundled conditional VAE: a :class:`~cfcheck.models.generative.GenerativeRecipe`.

A domain declares its image mechanism as a :class:`ConditionalVAERecipe`: the architecture, the
training configuration, how a split becomes (images, condition) and a ``measure_quality``
function that knows the domain's SCM and evaluation models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch

from cfcheck.core.seeds import Stream, seeded

from ...builders import architecture, build_model
from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields
from ..diffusion.recipe import training_checkpoint
from .counterfactual_training import counterfactual_finetune
from .training import train_cvae

if TYPE_CHECKING:
    from .hierarchical import ConditionalHVAE
    from .network import ConditionalVAE

__all__ = ["COUNTERFACTUAL_FINETUNE", "COUNTERFACTUAL_OPTIONS", "ConditionalVAERecipe"]

#: the seed of the counterfactual fine-tuning phase (:func:`counterfactual_finetune`) from the recipe's seed
COUNTERFACTUAL_FINETUNE = Stream("VAE counterfactual fine-tuning", start=5)

#: the options of the counterfactual fine-tuning phase, with defaults (off unless counterfactual_epochs > 0)
COUNTERFACTUAL_OPTIONS = {
    "counterfactual_epochs": 0,
    "counterfactual_lr": 1e-4,
    "counterfactual_weight": 1.0,
    "predictor_epochs": 2,
    "counterfactual_noise": False,
    "predictor_mixup": False,
}


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
    interface: str = (
        "encode(x, c) -> posterior mean and log-variance of z; decode(z, c) -> per-pixel Gaussian "
        "mean (in [0, 1]) and standard deviation; counterfactual(x, c, c*) abducts z and the pixel "
        "noise under c and decodes under c*. c: the parents as the domain encodes them."
    )

    #: the training values recorded with the measured quality
    final_keys: ClassVar[tuple[str, ...]] = ("final_nll", "final_kl")

    def fit(
        self, images: torch.Tensor, condition: torch.Tensor, config: GenerativeTrainConfig
    ) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """The ELBO training loop (resuming from its checkpoint, keyed by the ELBO phase's settings alone),
        then, with ``options["counterfactual_epochs"]``, the counterfactual fine-tuning
        (:mod:`~cfcheck.models.generative.vae.counterfactual_training`): (state dict, training values)."""
        finetune = {key: config.options[key] for key in COUNTERFACTUAL_OPTIONS if key in config.options}
        elbo = replace(config, options={k: v for k, v in config.options.items() if k not in finetune})
        state, info = train_cvae(
            images,
            condition,
            self.arch_kwargs,
            seed=elbo.seed,
            epochs=elbo.epochs,
            batch_size=elbo.batch_size,
            lr=elbo.lr,
            options=elbo.options,
            checkpoint=training_checkpoint(self.name, self.arch_kwargs, elbo),
            # a VAE recipe names a conditional VAE's architecture (the registry types it nn.Module)
            network=cast("Callable[..., ConditionalVAE | ConditionalHVAE]", architecture(self.architecture).factory),
        )
        if not finetune.get("counterfactual_epochs"):
            return state, info
        settings = {**COUNTERFACTUAL_OPTIONS, **finetune}
        network = build_model(self.architecture, **dict(self.arch_kwargs))
        network.load_state_dict(state)
        info = {
            **info,
            **counterfactual_finetune(
                network,
                images,
                condition,
                seed=seeded(config.seed, COUNTERFACTUAL_FINETUNE),
                epochs=settings["counterfactual_epochs"],
                batch_size=config.batch_size,
                lr=settings["counterfactual_lr"],
                weight=settings["counterfactual_weight"],
                predictor_epochs=settings["predictor_epochs"],
                abduct_pixel_noise=bool(settings["counterfactual_noise"]),
                predictor_mixup=bool(settings["predictor_mixup"]),
            ),
        }
        return {k: v.detach().clone() for k, v in network.state_dict().items()}, info

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        """Trains on the (images, condition) of ``data`` with :meth:`fit`, then measures the quality."""
        images, condition = self.columns(data)
        if config.n is not None:
            images, condition = images[: config.n], condition[: config.n]
        state, info = self.fit(images, condition, config)
        network = build_model(self.architecture, **dict(self.arch_kwargs))
        network.load_state_dict(state)
        network.eval()
        with torch.no_grad():
            recorded = (*self.final_keys, "cf_loss", "predictor_loss")  # the last two: counterfactual fine-tuning
            quality = {**{key: info[key] for key in recorded if key in info}, **self.measure_quality(network, config)}
        return GenerativeTrainResult(state_dict=state, quality=quality, examples=int(images.shape[0]))
