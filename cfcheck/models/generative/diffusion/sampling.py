"""DDIM sampling with an optional guidance hook: the one loop every diffusion user here shares.

The DVCE and FastDiME reference methods, the DDPM's quality check and GOAR's projection all
noise an image to a timestep and denoise it with deterministic DDIM (η = 0) steps from the
network's ``DDIMScheduler``; methods steer the denoising through a ``guide`` callback that
may replace the predicted noise.

Formulas (ᾱ_t = ``alphas_cumprod[t]``, x in diffusion space ``[-1, 1]``):
``x_t = √ᾱ_t·x_0 + √(1−ᾱ_t)·ε`` (:func:`noise_to`); ``x̂_0 = (x_t − √(1−ᾱ_t)·ε̂)/√ᾱ_t``
(:func:`predict_x0`); one DDIM step ``x_{t'} = √ᾱ_{t'}·x̂_0 + √(1−ᾱ_{t'})·ε̂``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .network import DenoisingUNet, to_diffusion_space, to_image_space

__all__ = [
    "Guide",
    "ddim_timesteps",
    "denoise",
    "encode_decode",
    "noise_to",
    "predict_x0",
    "predicted_noise",
    "sample_images",
]

#: ``guide(x_t, t) -> eps'``: called at every step with the noisy batch and the timestep instead
#: of the network; returns the noise the DDIM step should use (usually the network's prediction
#: ε̂(x_t, t), from :func:`predicted_noise`, shifted by a guidance term)
Guide = Callable[[torch.Tensor, int], torch.Tensor]


def ddim_timesteps(network: DenoisingUNet, num_steps: int, start_fraction: float = 1.0) -> list[int]:
    """The descending DDIM timesteps of a ``num_steps`` grid that lie at or below the start.

    Args:
        network: the denoiser (its ``sampling_scheduler`` defines the grid).
        num_steps: steps of the full grid from T to 0 (the DDIM ``num_inference_steps``).
        start_fraction: where denoising starts, as a fraction of T (1: pure noise; 0.5: the
            middle of the schedule, as DVCE and DiME start).

    Returns:
        The timesteps, highest first; ``len`` ≈ ``num_steps · start_fraction``.

    Example:
        >>> net = DenoisingUNet(block_out_channels=(8, 8), norm_num_groups=4)
        >>> ddim_timesteps(net, 10, 0.5)
        [400, 300, 200, 100, 0]
    """
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 1:
        raise ValueError(f"num_steps must be a positive int, got {num_steps!r}")
    if not 0.0 < start_fraction <= 1.0:
        raise ValueError(f"start_fraction must be in (0, 1], got {start_fraction!r}")
    scheduler = network.sampling_scheduler()
    scheduler.set_timesteps(num_steps)
    start = start_fraction * (network.num_train_timesteps - 1)
    return [int(t) for t in scheduler.timesteps if int(t) <= start + 1e-9]


def _alpha(network: DenoisingUNet, t: int, like: torch.Tensor) -> torch.Tensor:
    return network.alphas_cumprod[t].to(like.device, like.dtype)


def noise_to(
    network: DenoisingUNet, x0: torch.Tensor, t: int, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``x_t`` drawn from q(x_t | x_0) for a batch in diffusion space (noise from ``generator``)."""
    a = _alpha(network, t, x0)
    noise = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
    return a.sqrt() * x0 + (1 - a).sqrt() * noise


def predicted_noise(network: DenoisingUNet, x_t: torch.Tensor, t: int) -> torch.Tensor:
    """The network's ε̂(x_t, t) for one timestep shared by the batch (autograd as the caller's)."""
    return network(x_t, torch.full((x_t.shape[0],), t, device=x_t.device, dtype=torch.long))


def predict_x0(network: DenoisingUNet, x_t: torch.Tensor, t: int, eps: torch.Tensor) -> torch.Tensor:
    """Tweedie's estimate x̂_0 of the clean image given ``x_t`` and the predicted noise."""
    a = _alpha(network, t, x_t)
    return (x_t - (1 - a).sqrt() * eps) / a.sqrt()


def denoise(
    network: DenoisingUNet,
    x_t: torch.Tensor,
    timesteps: list[int],
    *,
    guide: Guide | None = None,
    after_step: Callable[[torch.Tensor, int], torch.Tensor] | None = None,
    num_steps: int | None = None,
) -> torch.Tensor:
    """Runs DDIM (η = 0) from ``x_t`` at ``timesteps[0]`` down through ``timesteps``.

    Args:
        network: the denoiser.
        x_t: noisy batch in diffusion space at ``timesteps[0]``.
        timesteps: descending timesteps (from :func:`ddim_timesteps`); the last step goes to
            x̂_0 of the last timestep.
        guide: optional replacement of the network's noise prediction (see :data:`Guide`); it
            may build a graph, the denoising itself runs without one.
        after_step: optional ``after_step(x_next, i) -> x_next`` applied to the result of the
            ``i``-th step (e.g. inpainting: replace pixels outside a mask).
        num_steps: the grid size the timesteps came from (default: inferred from their spacing).

    Returns:
        The denoised batch x_0 in diffusion space (not clamped).
    """
    if not timesteps:
        return x_t
    scheduler = network.sampling_scheduler()
    if num_steps is None:
        spacing = timesteps[0] - timesteps[1] if len(timesteps) > 1 else network.num_train_timesteps
        num_steps = max(1, network.num_train_timesteps // spacing)
    scheduler.set_timesteps(num_steps)
    x = x_t
    for i, t in enumerate(timesteps):
        if guide is not None:
            eps = guide(x, t).detach()
        else:
            with torch.no_grad():
                eps = predicted_noise(network, x, t)
        with torch.no_grad():
            x = scheduler.step(eps, t, x, eta=0.0).prev_sample
            if after_step is not None:
                x = after_step(x, i)
    return x


def sample_images(
    network: DenoisingUNet,
    n: int,
    *,
    num_steps: int = 50,
    generator: torch.Generator | None = None,
    batch_size: int = 256,
) -> torch.Tensor:
    """``n`` unconditional samples (DDIM from pure noise), as images in ``[0, 1]``."""
    shape = (network.channels, network.sample_size, network.sample_size)
    device = network.alphas_cumprod.device
    timesteps = ddim_timesteps(network, num_steps)
    out = []
    for start in range(0, n, batch_size):
        m = min(batch_size, n - start)
        x = torch.randn((m, *shape), generator=generator, device=device)
        out.append(to_image_space(denoise(network, x, timesteps, num_steps=num_steps)))
    return torch.cat(out) if out else torch.zeros((0, *shape))


def encode_decode(
    network: DenoisingUNet,
    images: torch.Tensor,
    start_fraction: float,
    num_steps: int,
    generator: torch.Generator | None = None,
    guide: Guide | None = None,
) -> torch.Tensor:
    """Noises ``images`` (``[0, 1]``) to ``start_fraction``·T and denoises them (optionally guided)."""
    timesteps = ddim_timesteps(network, num_steps, start_fraction)
    x_t = noise_to(network, to_diffusion_space(images), timesteps[0], generator)
    return to_image_space(denoise(network, x_t, timesteps, guide=guide, num_steps=num_steps))
