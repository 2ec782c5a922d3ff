"""The exact diffusion denoiser of an isotropic Gaussian mixture with equal priors.

For x₀ drawn from (1/K)·Σ_k N(μ_k, σ²·I) and the forward process
x_t = √ᾱ·x₀ + √(1 − ᾱ)·ε, ε ~ N(0, I), every quantity a perfect denoising network would
output has a closed form (the integrals are Gaussian):

* p(x_t | k) = N(√ᾱ·μ_k, v·I) with v = ᾱσ² + 1 − ᾱ, so the responsibilities are
  r_k(x_t) = softmax_k(−‖x_t − √ᾱ·μ_k‖² / 2v) = softmax_k((√ᾱ·⟨x_t, μ_k⟩ − ᾱ‖μ_k‖²/2) / v)
  (the ‖x_t‖² term is common to all k and cancels; the softmax is a log-sum-exp);
* E[x₀ | x_t, k] = μ_k + c·(x_t − √ᾱ·μ_k) with c = √ᾱ·σ² / v, hence
  E[x₀ | x_t] = Σ_k r_k·E[x₀ | x_t, k] = c·x_t + ((1 − ᾱ)/v)·Σ_k r_k·μ_k;
* the noise a perfect ε-prediction network outputs is E[ε | x_t] =
  (x_t − √ᾱ·E[x₀ | x_t]) / √(1 − ᾱ) = (√(1 − ᾱ)/v)·(x_t − √ᾱ·Σ_k r_k·μ_k); the right-hand
  form has no 0/0 at ᾱ = 1, where it is 0 (x_t = x₀ says nothing about ε).

All functions take x_t as N×D and ᾱ as a number or an N-vector (one per sample), compute in
float64 and return x_t's dtype.
"""

from __future__ import annotations

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, describe

__all__ = ["MixtureDenoiser", "posterior_mean", "predicted_noise", "responsibilities"]


def _prepare(x_t: object, alpha_bar: object, means: Tensor) -> tuple[Tensor, Tensor]:
    """x_t as float64 N×D and ᾱ as float64 N×1, validated against the means (K×D)."""
    points = check_float_tensor("x_t", x_t, ndim=2)
    if points.shape[1] != means.shape[1]:
        raise ValueError(
            f"`x_t` must be N×{means.shape[1]} (one point of the mixture's dimension per row), "
            f"got shape {tuple(points.shape)}"
        )
    if isinstance(alpha_bar, bool) or not isinstance(alpha_bar, (int, float, Tensor)):
        raise TypeError(f"`alpha_bar` must be a number or a tensor of N values, got {describe(alpha_bar)}")
    alpha = torch.as_tensor(alpha_bar, dtype=torch.float64).to(points.device)
    if alpha.ndim == 0:
        alpha = alpha.expand(points.shape[0])
    elif alpha.shape != (points.shape[0],):
        raise ValueError(
            f"`alpha_bar` must be a number or hold one value per row of `x_t` ({points.shape[0]}), "
            f"got shape {tuple(alpha.shape)}"
        )
    if alpha.numel() and not bool(((alpha >= 0) & (alpha <= 1)).all()):  # also false for NaN
        raise ValueError(
            f"`alpha_bar` (ᾱ, the signal fraction of x_t) must lie in [0, 1], got values in "
            f"[{float(alpha.min()):.4g}, {float(alpha.max()):.4g}]"
        )
    return points.to(torch.float64), alpha.unsqueeze(1)


def _parts(points: Tensor, alpha: Tensor, means: Tensor, variance: float) -> tuple[Tensor, Tensor, Tensor]:
    """Responsibilities r (N×K), the weighted mean Σ_k r_k μ_k (N×D) and v (N×1)."""
    mu = means.to(device=points.device, dtype=torch.float64)
    v = alpha * variance + (1 - alpha)
    logits = (alpha.sqrt() * (points @ mu.T) - alpha * (mu * mu).sum(dim=1) / 2) / v
    r = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
    return r, r @ mu, v


def responsibilities(x_t: Tensor, alpha_bar: float | Tensor, means: Tensor, variance: float) -> Tensor:
    """p(k | x_t) for each component k (N×K; rows sum to 1). At ᾱ = 1 this is the Bayes
    posterior over classes of a clean point; at ᾱ = 0 it is the prior 1/K."""
    points, alpha = _prepare(x_t, alpha_bar, means)
    r, _, _ = _parts(points, alpha, means, variance)
    return r.to(x_t.dtype)


def posterior_mean(x_t: Tensor, alpha_bar: float | Tensor, means: Tensor, variance: float) -> Tensor:
    """E[x₀ | x_t] (N×D): x_t itself at ᾱ = 1, the prior mean (1/K)·Σ μ_k at ᾱ = 0."""
    points, alpha = _prepare(x_t, alpha_bar, means)
    _, weighted, v = _parts(points, alpha, means, variance)
    c = alpha.sqrt() * variance / v
    return (c * points + ((1 - alpha) / v) * weighted).to(x_t.dtype)


def predicted_noise(x_t: Tensor, alpha_bar: float | Tensor, means: Tensor, variance: float) -> Tensor:
    """E[ε | x_t] (N×D), the output of a perfect ε-prediction network: x_t at ᾱ = 0, 0 at ᾱ = 1."""
    points, alpha = _prepare(x_t, alpha_bar, means)
    _, weighted, v = _parts(points, alpha, means, variance)
    return ((1 - alpha).sqrt() / v * (points - alpha.sqrt() * weighted)).to(x_t.dtype)


class MixtureDenoiser(torch.nn.Module):
    """The exact ε-prediction "network" of the mixture, behind the interface the DDIM loop of
    :mod:`cfcheck.models.generative.diffusion.sampling` drives (``alphas_cumprod``,
    ``sampling_scheduler()``, ``forward(x_t, t)``): what a perfectly trained diffusion model of
    the toy would predict, on a linear β schedule (10⁻⁴ to 0.02 over T = 1000 steps, the DDPM
    default). The toy's points are the model space itself (scale 1).

    Args:
        means: K×D class means.
        variance: σ² of every coordinate within a class.
        num_train_timesteps: T.
    """

    model_space_scale = 1.0

    alphas_cumprod: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, means: Tensor, variance: float, num_train_timesteps: int = 1000) -> None:
        super().__init__()
        from diffusers import DDPMScheduler

        self.means, self.variance = means, float(variance)
        self.num_train_timesteps = num_train_timesteps
        schedule = DDPMScheduler(num_train_timesteps=num_train_timesteps, beta_schedule="linear")
        # diffusers sets alphas_cumprod in a config-registered __init__ its annotations do not show
        self.register_buffer("alphas_cumprod", schedule.alphas_cumprod.clone().float(), persistent=False)  # type: ignore[attr-defined]

    @staticmethod
    def to_model_space(x: Tensor) -> Tensor:
        return x

    @staticmethod
    def to_data_space(x: Tensor) -> Tensor:
        return x

    def sampling_scheduler(self):
        from diffusers import DDIMScheduler

        return DDIMScheduler(
            num_train_timesteps=self.num_train_timesteps,
            beta_schedule="linear",
            prediction_type="epsilon",
            clip_sample=False,
            set_alpha_to_one=True,
        )

    def forward(self, x_t: Tensor, t: Tensor) -> Tensor:
        alpha = self.alphas_cumprod.to(torch.float64)[torch.as_tensor(t).long().expand(x_t.shape[0]).cpu()]
        return predicted_noise(x_t, alpha, self.means, self.variance)
