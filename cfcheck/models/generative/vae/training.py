"""Deterministic, resumable training of a :class:`ConditionalVAE` (negative ELBO, AdamW).

Melistas et al.'s MorphoMNIST settings: AdamW (lr 10⁻³, β = (0.9, 0.9), weight decay 0.01), a
linear warm-up over the first 100 steps, gradient-norm clipping at 350 and skipping of steps
whose gradient norm exceeds 500, β = 1. The optimised objective is the negative ELBO per
image dimension (nats / (C·H·W)), as in Ribeiro et al.'s reference code, which those thresholds
are scaled for (on the per-image sum the gradient norm exceeds 500 from the first step and every
step would be skipped). Far fewer steps than their ~1M (the CPU budget).

With a ``checkpoint`` path the network, optimiser and generator states are saved every
``checkpoint_every`` steps (atomically); a rerun with the same settings resumes from the last
one and ends with the same weights as an uninterrupted run.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.core.io import atomic_write_bytes
from cfcheck.core.seeds import TRAINING_NOISE, seeded
from cfcheck.models.shuffling import epoch_order

from ..base import steps_per_epoch, with_defaults
from .network import ConditionalVAE

if TYPE_CHECKING:
    from .hierarchical import ConditionalHVAE

__all__ = ["VAE_OPTIONS", "train_cvae"]

#: the options a VAE recipe's ``GenerativeTrainConfig.options`` may set, with defaults
VAE_OPTIONS: Mapping[str, Any] = {
    "beta": 1.0,
    "warmup_steps": 100,
    "weight_decay": 0.01,
    "adam_beta2": 0.9,
    "grad_clip": 350.0,
    "grad_skip": 500.0,
    "checkpoint_every": 200,
}


def _save(path: Path, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def train_cvae(
    images: torch.Tensor,
    condition: torch.Tensor,
    arch_kwargs: Mapping[str, Any],
    *,
    seed: int,
    epochs: int,
    batch_size: int,
    lr: float,
    options: Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    log: Callable[[str], None] = print,
    network: Callable[..., ConditionalVAE | ConditionalHVAE] = ConditionalVAE,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Trains a :class:`ConditionalVAE` on ``images`` (N×C×32×32 in [0, 1]) given ``condition`` (N×k).

    ``network`` builds the model from ``arch_kwargs``: any conditional VAE with ``set_standardisation``
    and ``negative_elbo`` (e.g. :class:`~cfcheck.models.generative.vae.hierarchical.ConditionalHVAE`).

    Args:
        images: the training images.
        condition: their condition vectors (the parents).
        arch_kwargs: keyword arguments of ``network``.
        seed: seeds the initial weights, the data order and the latent samples.
        epochs: passes over the data.
        batch_size: images per step.
        lr: peak learning rate.
        options: see :data:`VAE_OPTIONS`.
        checkpoint: file to save and resume from (``None``: no checkpoints).
        log: receives progress lines.
        network: the model class (default :class:`ConditionalVAE`).

    Returns:
        The state dict and ``{"final_loss", "final_nll", "final_kl", "steps", "skipped"}`` (per-image
        nats, averaged over the last 100 steps).
    """
    settings = with_defaults(VAE_OPTIONS, options, "VAE")
    if images.ndim != 4 or images.shape[0] < 1 or condition.ndim != 2 or condition.shape[0] != images.shape[0]:
        raise ValueError(
            f"images must be N×C×H×W and condition N×k with the same N, got {tuple(images.shape)} "
            f"and {tuple(condition.shape)}"
        )
    n = images.shape[0]
    per_epoch = steps_per_epoch(n, batch_size)
    total = epochs * per_epoch
    torch.manual_seed(seed)
    model = network(**dict(arch_kwargs))
    model.set_standardisation(condition)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=lr, betas=(0.9, settings["adam_beta2"]), weight_decay=settings["weight_decay"]
    )
    generator = torch.Generator().manual_seed(seeded(seed, TRAINING_NOISE))
    step, skipped, history = 0, 0, []
    path = Path(checkpoint) if checkpoint is not None else None
    if path is not None and path.exists():
        state = torch.load(path, weights_only=True)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        generator.set_state(state["generator"])
        step, skipped, history = int(state["step"]), int(state["skipped"]), [tuple(h) for h in state["history"]]
        log(f"resumed from {path} at step {step}/{total}")
    first, started = step, time.perf_counter()
    pixels = images[0].numel()
    model.train()
    while step < total:
        epoch, position = divmod(step, per_epoch)
        order = epoch_order(n, seed, epoch)
        rows = order[position * batch_size : (position + 1) * batch_size]
        loss, nll, kl = (
            v.mean()
            for v in model.negative_elbo(images[rows], condition[rows], beta=settings["beta"], generator=generator)
        )
        objective = loss / pixels  # per dimension, as Ribeiro et al.'s code: the clip/skip thresholds' scale
        for group in optimiser.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / max(1, settings["warmup_steps"]))
        optimiser.zero_grad(set_to_none=True)
        objective.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
        if math.isfinite(float(norm)) and float(norm) < settings["grad_skip"]:
            optimiser.step()
        else:
            skipped += 1
        history = (history + [(loss.item(), nll.item(), kl.item())])[-100:]
        step += 1
        if step % settings["checkpoint_every"] == 0 or step == total:
            if path is not None:
                _save(
                    path,
                    {
                        "model": model.state_dict(),
                        "optimiser": optimiser.state_dict(),
                        "generator": generator.get_state(),
                        "step": step,
                        "skipped": skipped,
                        "history": history,
                    },
                )
            rate = (time.perf_counter() - started) / max(1, step - first)
            log(
                f"step {step}/{total} loss {sum(h[0] for h in history) / len(history):.1f} ({rate:.2f} s/step this run)"
            )
    count = max(1, len(history))
    info = {
        "final_loss": sum(h[0] for h in history) / count,
        "final_nll": sum(h[1] for h in history) / count,
        "final_kl": sum(h[2] for h in history) / count,
        "steps": float(total),
        "skipped": float(skipped),
    }
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, info
