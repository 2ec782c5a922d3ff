"""Deterministic DDPM training: ε-prediction loss, AdamW with warm-up and cosine decay, EMA.

:func:`train_denoiser` is the whole loop. It is deterministic for a seed and thread count, and
resumable: with a ``checkpoint`` path it saves network, EMA, optimiser and random-generator
states every ``checkpoint_every`` steps (atomically), and a rerun with the same configuration
continues from the last one and ends with the same weights as an uninterrupted run. A finished
checkpoint makes the rerun free, so a recipe's quality measurement can be retried alone.
"""

from __future__ import annotations

import copy
import io
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from cfcheck.core.io import atomic_write_bytes
from cfcheck.core.seeds import TRAINING_NOISE, seeded
from cfcheck.models.shuffling import epoch_order

from ..base import steps_per_epoch, with_defaults
from .network import DenoisingUNet, to_diffusion_space

__all__ = ["DIFFUSION_OPTIONS", "train_denoiser"]

#: the options a diffusion recipe's ``GenerativeTrainConfig.options`` may set, with defaults
DIFFUSION_OPTIONS: Mapping[str, Any] = {
    "steps": None,  # optimiser steps (None: ``epochs`` passes over the data)
    "warmup_steps": 200,  # linear learning-rate warm-up, then cosine decay to 0
    "ema_decay": 0.999,  # exponential moving average of the weights (what is shipped)
    "weight_decay": 0.0,
    "checkpoint_every": 250,
}


def _learning_rate(step: int, total: int, base: float, warmup: int) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _save(path: Path, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def train_denoiser(
    images: torch.Tensor,
    arch_kwargs: Mapping[str, Any],
    *,
    seed: int,
    epochs: int,
    batch_size: int,
    lr: float,
    options: Mapping[str, Any] | None = None,
    checkpoint: str | Path | None = None,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Trains a :class:`DenoisingUNet` on ``images`` (N×C×H×W in ``[0, 1]``).

    Args:
        images: the training images.
        arch_kwargs: keyword arguments of :class:`DenoisingUNet`.
        seed: seeds the initial weights, the data order, the timesteps and the noise.
        epochs: passes over ``images`` (used when ``options["steps"]`` is ``None``).
        batch_size: images per step.
        lr: peak learning rate.
        options: see :data:`DIFFUSION_OPTIONS`.
        checkpoint: file to save and resume from (``None``: no checkpoints).
        log: receives progress lines.

    Returns:
        The EMA weights' state dict and ``{"final_loss": ..., "steps": ...}`` (loss averaged over
        the last 100 steps).
    """
    settings = with_defaults(DIFFUSION_OPTIONS, options, "diffusion")
    if images.dim() != 4 or images.shape[0] < 1:
        raise ValueError(f"images must be N×C×H×W with N >= 1, got {tuple(images.shape)}")
    n = images.shape[0]
    per_epoch = steps_per_epoch(n, batch_size)
    total = int(settings["steps"]) if settings["steps"] is not None else epochs * per_epoch
    torch.manual_seed(seed)
    # ~10% faster on CPU; nn.Module.to takes memory_format, torch's stubs leave it out
    model = DenoisingUNet(**dict(arch_kwargs)).to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    ema = copy.deepcopy(model).requires_grad_(False)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=settings["weight_decay"])
    generator = torch.Generator().manual_seed(seeded(seed, TRAINING_NOISE))
    alphas_cumprod = model.alphas_cumprod
    step, losses = 0, []
    path = Path(checkpoint) if checkpoint is not None else None
    if path is not None and path.exists():
        state = torch.load(path, weights_only=True)
        model.load_state_dict(state["model"])
        ema.load_state_dict(state["ema"])
        optimiser.load_state_dict(state["optimiser"])
        generator.set_state(state["generator"])
        step, losses = int(state["step"]), list(state["losses"])
        log(f"resumed from {path} at step {step}/{total}")
    first_step = step
    started = time.perf_counter()
    model.train()
    while step < total:
        epoch, position = divmod(step, per_epoch)
        # each epoch's order comes from its own seed, so resuming mid-epoch needs no saved order
        order = epoch_order(n, seed, epoch)
        batch = to_diffusion_space(images[order[position * batch_size : (position + 1) * batch_size]])
        batch = batch.contiguous(memory_format=torch.channels_last)
        t = torch.randint(0, model.num_train_timesteps, (batch.shape[0],), generator=generator)
        noise = torch.randn(batch.shape, generator=generator)
        a = alphas_cumprod[t].view(-1, 1, 1, 1)
        noisy = a.sqrt() * batch + (1 - a).sqrt() * noise
        loss = torch.nn.functional.mse_loss(model(noisy, t), noise)
        for group in optimiser.param_groups:
            group["lr"] = _learning_rate(step, total, lr, settings["warmup_steps"])
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        decay = min(settings["ema_decay"], (1 + step) / (10 + step))
        with torch.no_grad():
            for e, p in zip(ema.parameters(), model.parameters(), strict=True):
                e.lerp_(p, 1.0 - decay)
        losses = (losses + [loss.item()])[-100:]
        step += 1
        if step % settings["checkpoint_every"] == 0 or step == total:
            if path is not None:
                _save(
                    path,
                    {
                        "model": model.state_dict(),
                        "ema": ema.state_dict(),
                        "optimiser": optimiser.state_dict(),
                        "generator": generator.get_state(),
                        "step": step,
                        "losses": losses,
                    },
                )
            rate = (time.perf_counter() - started) / max(1, step - first_step)
            log(f"step {step}/{total} loss {sum(losses) / len(losses):.4f} ({rate:.2f} s/step this run)")
    ema_state = {k: v.detach().clone() for k, v in ema.state_dict().items()}
    return ema_state, {"final_loss": sum(losses) / max(1, len(losses)), "steps": float(total)}
