"""A conditional VAE image mechanism (Pawlowski et al. 2020's Deep-SCM VAE as Melistas et al.
2024 benchmark it, Tables 7–8 of their appendix).

Encoder q(z | x, c): Conv(32, 5×5, stride 2) → Conv(32, 3×3, s2) → Conv(32, 3×3, s2) (ReLU) →
Linear 128 → [concat c] → Linear 128 → Linear 2·latent (mean, log-variance). Decoder p(x | z, c):
[z, c] → Linear 128 → Linear 512 → 32×4×4 → 3 × (Upsample 2×, Conv, ReLU) with 32, 32, 16
filters → a 1×1 Gaussian head giving the per-pixel mean (sigmoid, in [0, 1]) and standard
deviation (``sigma_min`` + softplus: learned, bounded below so empty background cannot drive
the likelihood to infinity).

The condition c (the image's parents) is standardised inside the module: its first
``standardised_columns`` columns with fixed statistics set from the training data
(:meth:`ConditionalVAE.set_standardisation`); the rest (e.g. a one-hot class) pass as they are.

The counterfactual (Melistas et al. §3.2): z = the posterior mean of q(z | x, c); the pixel noise
is abducted as ε = (x − μ(z, c)) / σ(z, c) and x* = μ(z, c*) + σ(z, c*)·ε (or x* = μ(z, c*) with
``abduct_pixel_noise=False``), clamped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ConditionalVAE", "ConditionedNetwork", "GaussianImageMechanism", "gaussian_nll"]


def gaussian_nll(x: torch.Tensor, loc: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Per-image negative log-likelihood (nats) of ``x`` under the per-pixel Gaussian (loc, scale)."""
    return (0.5 * ((x - loc) / scale) ** 2 + scale.log() + 0.5 * math.log(2 * math.pi)).flatten(1).sum(1)


class ConditionedNetwork(nn.Module):
    """What every conditional image mechanism (VAE, HVAE, GAN) shares: the argument checks and the
    standardisation of the condition c (its first ``standardised_columns`` columns, with statistics set
    from the training data by :meth:`set_standardisation`; the rest, e.g. a one-hot class, pass as they are)."""

    image_size = 32

    condition_loc: torch.Tensor  # a buffer (register_buffer)
    condition_scale: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, condition_features: int, channels: int, standardised_columns: int, **sizes: int) -> None:
        super().__init__()
        for name, value, low in (
            ("condition_features", condition_features, 1),
            ("channels", channels, 1),
            ("standardised_columns", standardised_columns, 0),
            *((key, size, 1) for key, size in sizes.items()),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if standardised_columns > condition_features:
            raise ValueError(
                f"standardised_columns ({standardised_columns}) exceeds condition_features ({condition_features})"
            )
        self.condition_features, self.channels = condition_features, channels
        self.standardised_columns = standardised_columns
        self.register_buffer("condition_loc", torch.zeros(condition_features))
        self.register_buffer("condition_scale", torch.ones(condition_features))

    def set_standardisation(self, condition: torch.Tensor) -> None:
        """Stores mean and standard deviation of the first ``standardised_columns`` columns."""
        c = self._check_condition(condition, None)
        k = self.standardised_columns
        self.condition_loc[:k] = c[:, :k].mean(0)
        self.condition_scale[:k] = c[:, :k].std(0).clamp_min(1e-6)

    def _check_condition(self, condition: torch.Tensor, n: int | None) -> torch.Tensor:
        if (
            not isinstance(condition, torch.Tensor)
            or condition.ndim != 2
            or condition.shape[1] != self.condition_features
        ):
            raise ValueError(
                f"condition must be a tensor of shape (N, {self.condition_features}), got "
                f"{getattr(condition, 'shape', type(condition).__name__)}"
            )
        if n is not None and condition.shape[0] != n:
            raise ValueError(f"condition has {condition.shape[0]} rows for {n} images/latents")
        return condition.float()

    def _standardise(self, condition: torch.Tensor, n: int) -> torch.Tensor:
        c = self._check_condition(condition, n).to(self.condition_loc.device)
        return (c - self.condition_loc) / self.condition_scale

    def _check_images(self, x: torch.Tensor) -> None:
        expected = (self.channels, self.image_size, self.image_size)
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"x must be N×{expected[0]}×32×32, got {tuple(x.shape)}")


class GaussianImageMechanism(ConditionedNetwork):
    """A conditional VAE's counterfactual, whatever its latents: ``encode(x, c)[0]`` gives the posterior
    mean(s) and ``decode(z, c)`` the per-pixel Gaussian (μ, σ). The pixel noise ε = (x − μ(z, c)) / σ(z, c) is
    abducted and x* = μ(z, c*) + σ(z, c*)·ε, or μ(z, c*) alone; clamped to [0, 1]."""

    # each subclass defines them: the posterior (mean(s), log-variance(s)) and the per-pixel Gaussian (μ, σ)
    encode: Callable[[torch.Tensor, torch.Tensor], tuple[Any, Any]]
    decode: Callable[[Any, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]

    def reconstruct(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """μ(z, c) at the posterior mean z (no pixel noise)."""
        return self.decode(self.encode(x, condition)[0], condition)[0]

    def counterfactual(
        self,
        x: torch.Tensor,
        condition: torch.Tensor,
        counterfactual_condition: torch.Tensor,
        *,
        abduct_pixel_noise: bool = True,
    ) -> torch.Tensor:
        """x* under the counterfactual condition (class docstring), clamped to [0, 1]."""
        z = self.encode(x, condition)[0]
        loc_cf, scale_cf = self.decode(z, counterfactual_condition)
        if not abduct_pixel_noise:
            return loc_cf.clamp(0.0, 1.0)
        loc, scale = self.decode(z, condition)
        return (loc_cf + scale_cf * (x - loc) / scale).clamp(0.0, 1.0)

    def forward(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """The reconstruction μ(z, c) (what a registry-built module's call returns)."""
        return self.reconstruct(x, condition)


class ConditionalVAE(GaussianImageMechanism):
    """q(z | x, c) and p(x | z, c) for square single- or multi-channel images of side 32.

    Args:
        condition_features: length of the condition vector c.
        latent_dim: dimension of z (16 in Melistas et al.).
        channels: image channels.
        standardised_columns: leading columns of c standardised with the stored statistics.
        sigma_min: lower bound of the decoder's per-pixel standard deviation.

    Example:
        >>> vae = ConditionalVAE(condition_features=3)
        >>> mean, log_var = vae.encode(torch.rand(2, 1, 32, 32), torch.zeros(2, 3))
        >>> vae.decode(mean, torch.zeros(2, 3))[0].shape
        torch.Size([2, 1, 32, 32])
    """

    def __init__(
        self,
        condition_features: int,
        latent_dim: int = 16,
        channels: int = 1,
        standardised_columns: int = 0,
        sigma_min: float = 0.01,
    ) -> None:
        super().__init__(condition_features, channels, standardised_columns, latent_dim=latent_dim)
        if not sigma_min > 0:
            raise ValueError(f"sigma_min must be > 0, got {sigma_min!r}")
        self.latent_dim, self.sigma_min = latent_dim, float(sigma_min)
        self.features = nn.Sequential(
            nn.Conv2d(channels, 32, 5, 2, 1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, 2, 1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, 2, 1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(512, 128),
            nn.ReLU(),
        )
        self.posterior = nn.Sequential(
            nn.Linear(128 + condition_features, 128), nn.ReLU(), nn.Linear(128, 2 * latent_dim)
        )
        self.expand = nn.Sequential(
            nn.Linear(latent_dim + condition_features, 128), nn.ReLU(), nn.Linear(128, 512), nn.ReLU()
        )
        self.upsample = nn.Sequential(
            nn.Upsample(scale_factor=2),
            nn.Conv2d(32, 32, 3, 1, 1),
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(32, 32, 3, 1, 1),
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(32, 16, 5, 1, 2),
            nn.ReLU(),
        )
        self.head = nn.Conv2d(16, 2 * channels, 1)

    def encode(self, x: torch.Tensor, condition: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and log-variance (N × latent_dim each) of q(z | x, c)."""
        self._check_images(x)
        c = self._standardise(condition, x.shape[0])
        mean, log_var = self.posterior(torch.cat([self.features(x), c], 1)).chunk(2, dim=1)
        return mean, log_var.clamp(-20.0, 10.0)

    def decode(self, z: torch.Tensor, condition: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-pixel mean (in [0, 1]) and standard deviation of p(x | z, c), each N×C×32×32."""
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(f"z must be N×{self.latent_dim}, got {tuple(z.shape)}")
        c = self._standardise(condition, z.shape[0])
        h = self.upsample(self.expand(torch.cat([z, c], 1)).view(-1, 32, 4, 4))
        loc, raw_scale = self.head(h).chunk(2, dim=1)
        return torch.sigmoid(loc), self.sigma_min + F.softplus(raw_scale)

    def negative_elbo(
        self, x: torch.Tensor, condition: torch.Tensor, *, beta: float = 1.0, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-image negative ELBO, Gaussian reconstruction NLL and KL (nats), one z sample each."""
        mean, log_var = self.encode(x, condition)
        # drawn on the generator's device (a CPU generator can drive a model on a GPU)
        noise = torch.randn(
            mean.shape, generator=generator, device=generator.device if generator is not None else mean.device
        ).to(mean)
        z = mean + (0.5 * log_var).exp() * noise
        nll = gaussian_nll(x, *self.decode(z, condition))
        kl = 0.5 * (mean**2 + log_var.exp() - 1.0 - log_var).sum(1)
        return nll + beta * kl, nll, kl
