"""Deterministic training of a :class:`ConditionalGAN` (Melistas et al. 2024, §3.2 and A.4) in up to three phases.

1. **Adversarial** (conditional ALI / BiGAN, eq. 5): the discriminator learns to tell (x, E(x, c), c)
   from (G(z, c), z, c) with z ~ N(0, I) and c the parents of a real image; encoder and generator
   learn the opposite labels (non-saturating binary cross-entropy). The discriminator's real label is
   smoothed to ``real_label`` (0.9; one-sided label smoothing, a stabiliser Melistas et al. do not name).
2. **Encoder fine-tuning with a cyclic cost** (Dogan & Keles, as Melistas et al.): generator and
   discriminator frozen, the encoder minimises ‖x − G(E(x, c), c)‖₁ + ‖z − E(G(z, c), c)‖₁ (the
   reconstruction in image and in latent space).
3. **Counterfactual fine-tuning** (``counterfactual_epochs`` > 0; de Sousa Ribeiro et al.'s counterfactual
   training, as the bundled VAEs use it; not in Melistas et al.'s GAN): encoder and generator together
   (discriminator frozen) minimise ``reconstruction_weight`` × ‖x − G(E(x, c), c)‖₁ + ‖z − E(G(z, c), c)‖₁
   (:func:`cyclic_fit`) + ``counterfactual_weight`` × the loss of the generator's own auxiliary parent
   predictor on G(E(x, c), c*), c* the parents of another image of the batch, + ``adversarial_weight`` × the
   frozen discriminator's loss calling the reconstruction pair real
   (:func:`~cfcheck.models.generative.vae.counterfactual_training.counterfactual_finetune`; AdamW as there).
   Without it the generator ignores the parents (do(digit) accuracy 0.133) and reconstructs poorly.

Adam with β = (0.5, 0.999) for phases 1 and 2, as theirs; fewer epochs than their early-stopped runs
(the CPU budget). Data order, latent draws and dropout are seeded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.nn.functional as F

from cfcheck.core.seeds import TRAINING_NOISE, Stream, seeded

from ..base import epoch_batches, steps_per_epoch, with_defaults
from ..vae.counterfactual_training import FitTerm, counterfactual_finetune
from .network import ConditionalGAN

__all__ = ["COUNTERFACTUAL_FINETUNE", "ENCODER_FINETUNE_ORDER", "GAN_OPTIONS", "cyclic_fit", "train_cgan"]

#: the seed whose epoch orders (:func:`~cfcheck.models.shuffling.epoch_batches`, under
#: :data:`~cfcheck.core.seeds.EPOCH_ORDER`) the encoder's fine-tuning (phase 2) steps through
ENCODER_FINETUNE_ORDER = Stream("GAN encoder fine-tuning epoch order", start=7)
#: the seed of the counterfactual fine-tuning (phase 3, :func:`counterfactual_finetune`)
COUNTERFACTUAL_FINETUNE = Stream("GAN counterfactual fine-tuning", start=11)

#: the options a GAN recipe's ``GenerativeTrainConfig.options`` may set, with defaults; the ``counterfactual_*``
#: and ``predictor_*`` ones configure the counterfactual fine-tuning (phase 3, off unless counterfactual_epochs > 0)
GAN_OPTIONS: Mapping[str, Any] = {
    "finetune_epochs": 1,
    "adam_beta1": 0.5,
    "finetune_lr": 1e-4,
    "log_every": 100,
    "real_label": 0.9,
    "counterfactual_epochs": 0,
    "counterfactual_lr": 1e-4,
    "counterfactual_weight": 1.0,
    "predictor_epochs": 2,
    "predictor_mixup": True,
    "adversarial_weight": 0.0,
    "reconstruction_weight": 1.0,
}


def cyclic_fit(reconstruction_weight: float = 1.0, adversarial_weight: float = 0.0) -> FitTerm:
    """The GAN's fit term for :func:`~cfcheck.models.generative.vae.counterfactual_training.counterfactual_finetune`:
    the cyclic cost ``reconstruction_weight`` × ‖x − G(E(x, c), c)‖₁ + ‖z − E(G(z, c), c)‖₁ (means over
    elements), plus, with ``adversarial_weight``, that weight × the non-saturating loss of the (frozen)
    discriminator calling the reconstruction pair (G(E(x, c), c), E(x, c), c) real. Logs the image term."""
    if reconstruction_weight <= 0 or adversarial_weight < 0:
        raise ValueError(
            f"need reconstruction_weight > 0 and adversarial_weight >= 0, got {reconstruction_weight} "
            f"and {adversarial_weight}"
        )

    def fit(
        model: ConditionalGAN, x: torch.Tensor, c: torch.Tensor, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.randn(len(x), model.latent_dim, generator=generator)
        abducted = model.encode(x, c)
        reconstruction = model.decode(abducted, c)
        image = (reconstruction - x).abs().mean()
        objective = reconstruction_weight * image + (model.encode(model.decode(z, c), c) - z).abs().mean()
        if adversarial_weight:
            logit = model.discriminate(reconstruction, abducted, c)
            fooled = F.binary_cross_entropy_with_logits(logit, torch.ones_like(logit))
            objective = objective + adversarial_weight * fooled
        return objective, image

    return fit


def train_cgan(
    images: torch.Tensor,
    condition: torch.Tensor,
    arch_kwargs: Mapping[str, Any],
    *,
    seed: int,
    epochs: int,
    batch_size: int,
    lr: float,
    options: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Trains a :class:`ConditionalGAN` on ``images`` (N×C×32×32 in [0, 1]) given ``condition`` (N×k).

    Args:
        images: the training images.
        condition: their condition vectors (the parents).
        arch_kwargs: keyword arguments of :class:`ConditionalGAN`.
        seed: seeds the initial weights, the data order, the latent draws and dropout.
        epochs: adversarial passes over the data.
        batch_size: images per step.
        lr: Adam's learning rate in the adversarial phase.
        options: see :data:`GAN_OPTIONS`.
        log: receives progress lines.

    Returns:
        The state dict and ``{"final_d_loss", "final_g_loss", "final_cycle", "steps"}`` (averages over
        the last 100 steps of their phase); with phase 3 also ``"cf_loss"``, ``"cf_nll"`` (there: the image
        term ‖x − G(E(x, c), c)‖₁) and ``"predictor_loss"`` (see ``counterfactual_finetune``).
    """
    settings = with_defaults(GAN_OPTIONS, options, "GAN")
    if images.ndim != 4 or images.shape[0] < 1 or condition.ndim != 2 or condition.shape[0] != images.shape[0]:
        raise ValueError(
            f"images must be N×C×H×W and condition N×k with the same N, got {tuple(images.shape)} "
            f"and {tuple(condition.shape)}"
        )
    torch.manual_seed(seed)
    model = ConditionalGAN(**dict(arch_kwargs))
    model.set_standardisation(condition)
    betas = (settings["adam_beta1"], 0.999)
    critic = [*model.critic_image.parameters(), *model.critic_latent.parameters(), *model.critic_joint.parameters()]
    players = [*model.generator_input.parameters(), *model.generator.parameters(), *model.encoder.parameters()]
    opt_d, opt_g = torch.optim.Adam(critic, lr=lr, betas=betas), torch.optim.Adam(players, lr=lr, betas=betas)
    noise = torch.Generator().manual_seed(seeded(seed, TRAINING_NOISE))
    n, step, started = images.shape[0], 0, time.perf_counter()
    d_hist: list[float] = []
    g_hist: list[float] = []
    c_hist: list[float] = []
    model.train()
    for rows in epoch_batches(n, batch_size, seed, epochs):
        x, c = images[rows], condition[rows]
        z = torch.randn(len(rows), model.latent_dim, generator=noise)
        real, fake = (x, model.encode(x, c)), (model.decode(z, c), z)
        ones, zeros = torch.ones(len(rows)), torch.zeros(len(rows))
        d_loss = F.binary_cross_entropy_with_logits(
            model.discriminate(real[0], real[1].detach(), c), ones * settings["real_label"]
        ) + F.binary_cross_entropy_with_logits(model.discriminate(fake[0].detach(), fake[1], c), zeros)
        opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        opt_d.step()
        g_loss = F.binary_cross_entropy_with_logits(
            model.discriminate(*real, c), zeros
        ) + F.binary_cross_entropy_with_logits(model.discriminate(*fake, c), ones)
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        opt_g.step()
        d_hist, g_hist, step = (d_hist + [d_loss.item()])[-100:], (g_hist + [g_loss.item()])[-100:], step + 1
        if step % settings["log_every"] == 0:
            log(
                f"adversarial step {step} d {sum(d_hist) / len(d_hist):.3f} g {sum(g_hist) / len(g_hist):.3f} "
                f"({(time.perf_counter() - started) / step:.2f} s/step)"
            )
    for parameter in critic + [*model.generator_input.parameters(), *model.generator.parameters()]:
        parameter.requires_grad_(False)
    model.eval()  # the frozen networks' dropout off; the encoder has none
    opt_e = torch.optim.Adam(model.encoder.parameters(), lr=settings["finetune_lr"], betas=betas)
    for rows in epoch_batches(n, batch_size, seeded(seed, ENCODER_FINETUNE_ORDER), settings["finetune_epochs"]):
        x, c = images[rows], condition[rows]
        z = torch.randn(len(rows), model.latent_dim, generator=noise)
        cycle = (model.reconstruct(x, c) - x).abs().mean() + (model.encode(model.decode(z, c), c) - z).abs().mean()
        opt_e.zero_grad(set_to_none=True)
        cycle.backward()
        opt_e.step()
        c_hist, step = (c_hist + [cycle.item()])[-100:], step + 1
        if step % settings["log_every"] == 0:
            log(f"fine-tuning step {step} cycle {sum(c_hist) / len(c_hist):.4f}")
    mean = lambda values: sum(values) / max(1, len(values))  # noqa: E731
    info = {"final_d_loss": mean(d_hist), "final_g_loss": mean(g_hist), "final_cycle": mean(c_hist)}
    if settings["counterfactual_epochs"]:
        players = [*model.encoder.parameters(), *model.generator_input.parameters(), *model.generator.parameters()]
        for parameter in players:
            parameter.requires_grad_(True)
        info.update(
            counterfactual_finetune(
                model,
                images,
                condition,
                seed=seeded(seed, COUNTERFACTUAL_FINETUNE),
                epochs=settings["counterfactual_epochs"],
                batch_size=batch_size,
                lr=settings["counterfactual_lr"],
                weight=settings["counterfactual_weight"],
                predictor_epochs=settings["predictor_epochs"],
                predictor_mixup=bool(settings["predictor_mixup"]),
                fit=cyclic_fit(settings["reconstruction_weight"], settings["adversarial_weight"]),
                parameters=players,
                log=log,
            )
        )
        step += settings["counterfactual_epochs"] * steps_per_epoch(n, batch_size)
    model.requires_grad_(True)
    info["steps"] = float(step)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, info
