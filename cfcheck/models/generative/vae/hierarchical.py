"""A conditional hierarchical VAE image mechanism (de Sousa Ribeiro et al.'s conditional top-down HVAE
as Melistas et al. 2024 benchmark it, §3.2 eq. 2–4), scaled down for a CPU.

Three latent levels, top-down: z₁ (``top_dim``-d vector, resolution 1), z₂ (``mid_channels``×4×4) and
z₃ (``low_channels``×8×8). Melistas et al. use 20 latents over resolutions {1, 4, 8, 16, 32} with
widths {256, …, 16}; this keeps the top three resolutions, one latent each, and narrow features.

* **Decoder (eq. 2)**: the top-down state starts from z₁ and the parents, h₄ = f¹(z₁, pa) (a 4×4
  map); each further level adds its latent *and the parents* through a learned 1×1 projection,
  h ← h + fⁱ(zᵢ, pa), before upsampling; a Gaussian head gives the per-pixel mean (sigmoid) and
  standard deviation (``sigma_min`` + softplus), as the conditional VAE's.
* **Prior**: p(z₁) = N(0, I); p(z₂ | z₁) and p(z₃ | z₁, z₂) are computed on a separate top-down
  stream that sees the latents only, so the exogenous noise z₁:₃ is independent of the parents
  (Markovian SCM; Melistas et al. §3.2).
* **Posterior (eq. 4)**: q(z₁ | x, pa) q(z₂ | z₁, x, pa) q(z₃ | z₁, z₂, x, pa): a bottom-up
  encoder's features at 1×1, 4×4 and 8×8, each combined with the decoder's top-down state there
  (which carries the parents and the latents above).

The counterfactual (:class:`~.network.GaussianImageMechanism`) abducts every zᵢ as its posterior mean
(top-down, under the observed parents) and the pixel noise ε = (x − μ)/σ, and decodes
x* = μ(z, pa*) + σ(z, pa*)·ε (or μ(z, pa*) alone), as the conditional VAE does.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from .network import GaussianImageMechanism, gaussian_nll

__all__ = ["ConditionalHVAE", "gaussian_kl"]


def gaussian_kl(
    mean: torch.Tensor, log_var: torch.Tensor, prior_mean: torch.Tensor, prior_log_var: torch.Tensor
) -> torch.Tensor:
    """Per-example KL(N(mean, e^log_var) ‖ N(prior_mean, e^prior_log_var)), summed over all but the first axis."""
    kl = 0.5 * (prior_log_var - log_var + (log_var.exp() + (mean - prior_mean) ** 2) / prior_log_var.exp() - 1.0)
    return kl.flatten(1).sum(1)


def _conv(cin: int, cout: int, k: int = 3) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k, 1, k // 2)


class ConditionalHVAE(GaussianImageMechanism):
    """q(z₁:₃ | x, c) and p(x | z₁:₃, c) for images of side 32 (module docstring).

    Args:
        condition_features: length of the condition vector c.
        top_dim: dimension of z₁.
        mid_channels / low_channels: channels of z₂ (4×4) and z₃ (8×8).
        width: channels of the feature maps.
        channels: image channels.
        standardised_columns: leading columns of c standardised with the stored statistics.
        sigma_min: lower bound of the decoder's per-pixel standard deviation.

    Example:
        >>> hvae = ConditionalHVAE(condition_features=3)
        >>> latents = hvae.encode(torch.rand(2, 1, 32, 32), torch.zeros(2, 3))[0]
        >>> hvae.decode(latents, torch.zeros(2, 3))[0].shape
        torch.Size([2, 1, 32, 32])
    """

    def __init__(
        self,
        condition_features: int,
        top_dim: int = 16,
        mid_channels: int = 8,
        low_channels: int = 4,
        width: int = 32,
        channels: int = 1,
        standardised_columns: int = 0,
        sigma_min: float = 0.01,
    ) -> None:
        super().__init__(
            condition_features,
            channels,
            standardised_columns,
            top_dim=top_dim,
            mid_channels=mid_channels,
            low_channels=low_channels,
            width=width,
        )
        if not sigma_min > 0:
            raise ValueError(f"sigma_min must be > 0, got {sigma_min!r}")
        self.top_dim, self.mid_channels, self.low_channels = top_dim, mid_channels, low_channels
        self.width, self.sigma_min = width, float(sigma_min)
        w, k = width, condition_features
        # bottom-up encoder: 32 → 16 → 8 (e8) → 4 (e4) → vector (e1)
        self.enc8 = nn.Sequential(nn.Conv2d(channels, w, 4, 2, 1), nn.ReLU(), nn.Conv2d(w, w, 4, 2, 1), nn.ReLU())
        self.enc4 = nn.Sequential(nn.Conv2d(w, w, 4, 2, 1), nn.ReLU())
        self.enc1 = nn.Sequential(nn.Flatten(), nn.Linear(16 * w, 128), nn.ReLU())
        # posteriors
        self.q1 = nn.Sequential(nn.Linear(128 + k, 128), nn.ReLU(), nn.Linear(128, 2 * top_dim))
        self.q2 = nn.Sequential(_conv(2 * w, w), nn.ReLU(), _conv(w, 2 * mid_channels, 1))
        self.q3 = nn.Sequential(_conv(2 * w, w), nn.ReLU(), _conv(w, 2 * low_channels, 1))
        # pa-free prior stream
        self.prior_top = nn.Linear(top_dim, 16 * w)
        self.p2 = _conv(w, 2 * mid_channels, 1)
        self.prior_mid = _conv(mid_channels, w, 1)
        self.prior_up = nn.Sequential(nn.Upsample(scale_factor=2), _conv(w, w), nn.ReLU())
        self.p3 = _conv(w, 2 * low_channels, 1)
        # decoder: h_i = h_{i+1} + f^i(z_i, pa)
        self.f1 = nn.Sequential(nn.Linear(top_dim + k, 128), nn.ReLU(), nn.Linear(128, 16 * w))
        self.f2 = _conv(mid_channels + k, w, 1)
        self.up8 = nn.Sequential(nn.ReLU(), nn.Upsample(scale_factor=2), _conv(w, w))
        self.f3 = _conv(low_channels + k, w, 1)
        self.up32 = nn.Sequential(
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            _conv(w, w),
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            _conv(w, 16, 5),
            nn.ReLU(),
        )
        self.head = nn.Conv2d(16, 2 * channels, 1)

    @staticmethod
    def _split(stats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, log_var = stats.chunk(2, dim=1)
        return mean, log_var.clamp(-20.0, 10.0)

    @staticmethod
    def _tile(c: torch.Tensor, side: int) -> torch.Tensor:
        return c[:, :, None, None].expand(-1, -1, side, side)

    def _inference(
        self, x: torch.Tensor, condition: torch.Tensor, generator: torch.Generator | None, sample: bool
    ) -> tuple[list[torch.Tensor], list[tuple[torch.Tensor, torch.Tensor]], list[tuple[torch.Tensor, torch.Tensor]]]:
        """Top-down posterior: the latents (sampled or posterior means), the posterior and prior statistics."""
        self._check_images(x)
        c = self._standardise(condition, x.shape[0])
        e8 = self.enc8(x)
        e4 = self.enc4(e8)
        e1 = self.enc1(e4)
        draw = (
            (
                lambda m, lv: (
                    m
                    + (0.5 * lv).exp()
                    * torch.randn(
                        m.shape, generator=generator, device=generator.device if generator is not None else m.device
                    ).to(m)
                )
            )
            if sample
            else (lambda m, lv: m)
        )
        q1 = self._split(self.q1(torch.cat([e1, c], 1)))
        z1 = draw(*q1)
        h4 = self.f1(torch.cat([z1, c], 1)).view(-1, self.width, 4, 4)
        s4 = self.prior_top(z1).view(-1, self.width, 4, 4)
        q2, p2 = self._split(self.q2(torch.cat([e4, h4], 1))), self._split(self.p2(s4))
        z2 = draw(*q2)
        h8 = self.up8(h4 + self.f2(torch.cat([z2, self._tile(c, 4)], 1)))
        s8 = self.prior_up(s4 + self.prior_mid(z2))
        q3, p3 = self._split(self.q3(torch.cat([e8, h8], 1))), self._split(self.p3(s8))
        z3 = draw(*q3)
        zeros = torch.zeros_like(q1[0])
        return [z1, z2, z3], [q1, q2, q3], [(zeros, zeros), p2, p3]

    def encode(self, x: torch.Tensor, condition: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Posterior means and log-variances of z₁, z₂, z₃ (means taken top-down)."""
        latents, posteriors, _ = self._inference(x, condition, None, sample=False)
        return latents, [log_var for _, log_var in posteriors]

    def decode(self, latents: list[torch.Tensor], condition: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-pixel mean (in [0, 1]) and standard deviation of p(x | z₁:₃, c), each N×C×32×32."""
        z1, z2, z3 = latents
        shapes = ((self.top_dim,), (self.mid_channels, 4, 4), (self.low_channels, 8, 8))
        if any(tuple(z.shape[1:]) != shape for z, shape in zip(latents, shapes)):
            raise ValueError(f"latents must be shaped N×{shapes}, got {[tuple(z.shape) for z in latents]}")
        c = self._standardise(condition, z1.shape[0])
        h4 = self.f1(torch.cat([z1, c], 1)).view(-1, self.width, 4, 4)
        h8 = self.up8(h4 + self.f2(torch.cat([z2, self._tile(c, 4)], 1)))
        h = self.up32(h8 + self.f3(torch.cat([z3, self._tile(c, 8)], 1)))
        loc, raw_scale = self.head(h).chunk(2, dim=1)
        return torch.sigmoid(loc), self.sigma_min + F.softplus(raw_scale)

    def negative_elbo(
        self, x: torch.Tensor, condition: torch.Tensor, *, beta: float = 1.0, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-image negative ELBO, Gaussian reconstruction NLL and KL summed over the levels (nats)."""
        latents, posteriors, priors = self._inference(x, condition, generator, sample=True)
        nll = gaussian_nll(x, *self.decode(latents, condition))
        # a tensor, not sum()'s start 0: there is at least one level
        kl = cast(torch.Tensor, sum(gaussian_kl(*q, *p) for q, p in zip(posteriors, priors)))
        return nll + beta * kl, nll, kl
