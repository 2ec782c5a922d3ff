"""GOAR's projection back to the data manifold (Park et al. 2023): an input moved by x − v is
treated as noise of its own size, v fixes a timestep, 0.16·T more noise is added and DDIM denoises
it to t = 0 on a 25-step grid (:func:`manifold_projection`). The removal itself and the curves are
pure functions of :mod:`cfcheck.metrics.removal_curves`; this is the diffusion model's part.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from .sampling import denoise

__all__ = ["GOAR_EXTRA_STEPS", "GOAR_NUM_STEPS", "manifold_projection", "strength_start_index"]

#: Park et al.'s DDIM grid (25 steps) and the extra noise (0.16·T = 4 steps of that grid)
GOAR_NUM_STEPS = 25
GOAR_EXTRA_STEPS = 4


def _noise_to_signal(alphas_cumprod: Tensor) -> Tensor:
    a = alphas_cumprod.to(torch.float64)
    return ((1 - a) / a).sqrt()


def strength_start_index(strength: float, num_values: int, denoiser: Any, grid: Sequence[int]) -> int:
    """The position in the DDIM ``grid`` (timesteps, highest first) whose noise matches a move of
    Euclidean length ``strength``: with x_t/√ᾱ_t = x₀ + r_t·ε, r_t = √((1 − ᾱ_t)/ᾱ_t), a move
    of length s spread over ``num_values`` values is noise of standard deviation
    σ = s·scale/√num_values in model space; the timestep t with r_t closest to σ is found, then
    the grid position closest to t (as Park et al.'s ``perturbation_strength_to_t``)."""
    sigma = strength * float(denoiser.model_space_scale) / math.sqrt(num_values)
    t = int((_noise_to_signal(denoiser.alphas_cumprod) - sigma).abs().argmin())
    return int(torch.tensor([abs(g - t) for g in grid]).argmin())


def manifold_projection(
    x_removed: Tensor,
    strength: float,
    denoiser: Any,
    *,
    generator: torch.Generator,
    num_steps: int = GOAR_NUM_STEPS,
    extra_steps: int = GOAR_EXTRA_STEPS,
    batch_size: int = 250,
) -> Tensor:
    """GOAR's projection of ``x − v`` (with ‖v‖ = ``strength``) back to the data manifold.

    The matched timestep t_v (:func:`strength_start_index`) moves ``extra_steps`` grid steps up
    to t_w = t_v + 0.16·T; x − v gets noise of ratio √(r_w² − σ²) (so its total noise ratio is
    r_w, with σ the ratio v accounts for; Park et al.'s code adds (r_w − r_v)·ε, whose variance
    falls short of that), is scaled by √ᾱ_w and DDIM (η = 0) denoises it to t = 0.

    Args:
        x_removed: the perturbed inputs, in data space.
        strength: ‖v‖ of the move that produced them.
        denoiser: an ε-prediction model with ``alphas_cumprod``, ``sampling_scheduler()``,
            ``forward(x_t, t)``, ``to_model_space``/``to_data_space`` and ``model_space_scale``
            (:class:`cfcheck.models.generative.diffusion.DenoisingUNet`, or a domain's exact
            denoiser).
        generator: source of the extra noise.
        num_steps: the DDIM grid (25 in Park et al.).
        extra_steps: grid steps of extra noise (4 of 25 = 0.16·T).
        batch_size: inputs denoised together.

    Returns:
        The projected inputs in data space (for images: clamped to [0, 1]).
    """
    scheduler = denoiser.sampling_scheduler()
    scheduler.set_timesteps(num_steps)
    grid = [int(t) for t in scheduler.timesteps]
    num_values = x_removed[0].numel()
    # the grid runs from high to low timesteps: more noise is an earlier position
    start = max(0, strength_start_index(strength, num_values, denoiser, grid) - extra_steps)
    timesteps = grid[start:]
    t_w = timesteps[0]
    ratio_w = float(_noise_to_signal(denoiser.alphas_cumprod)[t_w])
    sigma = strength * float(denoiser.model_space_scale) / math.sqrt(num_values)
    extra = math.sqrt(max(ratio_w**2 - sigma**2, 0.0))
    alpha_w = float(denoiser.alphas_cumprod[t_w])
    device = denoiser.alphas_cumprod.device  # a bundled diffusion model sits on the run's device
    outputs = []
    for chunk in x_removed.split(batch_size):
        z = denoiser.to_model_space(chunk.to(device))
        noise = torch.randn(z.shape, generator=generator, device=generator.device).to(z)
        x_t = math.sqrt(alpha_w) * (z + extra * noise)
        with torch.no_grad():
            outputs.append(denoiser.to_data_space(denoise(denoiser, x_t, timesteps, num_steps=num_steps)))
    return torch.cat(outputs).to(x_removed.device)
