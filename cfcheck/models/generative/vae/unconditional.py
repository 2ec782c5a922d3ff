"""An unconditional VAE whose Gaussian posteriors define the CLD minimality distance.

Melistas et al. 2024 (§3.2, Minimality) measure how far a counterfactual is from its factual
with the KL divergence between the posteriors q(z | x) of an unconditional VAE. The network:
encoder Conv(32, 4×4, s2) → Conv(64, 4×4, s2) → Conv(64, 4×4, s2) (ReLU) → Linear 256 →
Linear 2·latent (posterior mean and log-variance); decoder Linear 256 → Linear 64·4·4 → three
transposed convolutions back to 32×32 with a sigmoid (Bernoulli mean). Trained on the negative
ELBO (binary cross-entropy + KL to N(0, I)) with Adam.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.core.seeds import SMALL_NET_EPOCH_ORDER, TRAINING_NOISE, seeded
from cfcheck.models.shuffling import epoch_orders

from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields, register_generative_architecture

__all__ = ["UnconditionalVAE", "UnconditionalVAERecipe", "train_unconditional_vae"]


class UnconditionalVAE(nn.Module):
    """q(z | x) and p(x | z) for N×C×32×32 images in [0, 1].

    Args:
        latent_dim: dimension of z.
        channels: image channels.

    Example:
        >>> mean, log_var = UnconditionalVAE(latent_dim=8).encode(torch.rand(2, 1, 32, 32))
        >>> tuple(mean.shape), tuple(log_var.shape)
        ((2, 8), (2, 8))
    """

    def __init__(self, latent_dim: int = 16, channels: int = 1) -> None:
        super().__init__()
        for name, value in (("latent_dim", latent_dim), ("channels", channels)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self.latent_dim, self.channels = latent_dim, channels
        self.encoder = nn.Sequential(
            nn.Conv2d(channels, 32, 4, 2, 1),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, 2, 1),
            nn.ReLU(),
            nn.Conv2d(64, 64, 4, 2, 1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 16, 256),
            nn.ReLU(),
            nn.Linear(256, 2 * latent_dim),
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent_dim, 256),
            nn.ReLU(),
            nn.Linear(256, 64 * 16),
            nn.ReLU(),
            nn.Unflatten(1, (64, 4, 4)),
            nn.ConvTranspose2d(64, 64, 4, 2, 1),
            nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 4, 2, 1),
            nn.ReLU(),
            nn.ConvTranspose2d(32, channels, 4, 2, 1),
        )

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and log-variance of q(z | x), N × latent_dim each."""
        if not isinstance(x, torch.Tensor) or x.ndim != 4 or tuple(x.shape[1:]) != (self.channels, 32, 32):
            raise ValueError(f"x must be N×{self.channels}×32×32, got {getattr(x, 'shape', type(x).__name__)}")
        mean, log_var = self.encoder(x).chunk(2, dim=1)
        return mean, log_var.clamp(-20.0, 10.0)

    def decode_logits(self, z: torch.Tensor) -> torch.Tensor:
        """Bernoulli logits of p(x | z), N×C×32×32."""
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(f"z must be N×{self.latent_dim}, got {tuple(z.shape)}")
        return self.decoder(z)

    def negative_elbo(
        self, x: torch.Tensor, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-image negative ELBO, reconstruction term (binary cross-entropy) and KL, in nats."""
        mean, log_var = self.encode(x)
        # drawn on the generator's device (a CPU generator can drive a model on a GPU)
        noise = torch.randn(
            mean.shape, generator=generator, device=generator.device if generator is not None else mean.device
        )
        z = mean + (0.5 * log_var).exp() * noise.to(mean)
        reconstruction = (
            F.binary_cross_entropy_with_logits(self.decode_logits(z), x, reduction="none").flatten(1).sum(1)
        )
        kl = 0.5 * (mean**2 + log_var.exp() - 1.0 - log_var).sum(1)
        return reconstruction + kl, reconstruction, kl

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The reconstruction (Bernoulli mean at the posterior mean)."""
        return torch.sigmoid(self.decode_logits(self.encode(x)[0]))


register_generative_architecture("unconditional_vae", UnconditionalVAE, family="vae", replace=True)


def train_unconditional_vae(
    images: torch.Tensor,
    arch_kwargs: Mapping[str, Any],
    config: GenerativeTrainConfig,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Adam on the mean negative ELBO; returns the state dict and the last epoch's mean terms."""
    if images.ndim != 4 or len(images) < 1:
        raise ValueError(f"images must be a non-empty N×C×H×W tensor, got {tuple(images.shape)}")
    if config.options:
        raise ValueError(f"the unconditional VAE takes no options, got {sorted(config.options)}")
    torch.manual_seed(config.seed)
    model = UnconditionalVAE(**dict(arch_kwargs))
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    noise = torch.Generator().manual_seed(seeded(config.seed, TRAINING_NOISE))
    n = len(images)
    per_epoch = max(1, n // config.batch_size)
    totals = {"loss": 0.0, "reconstruction": 0.0, "kl": 0.0}
    model.train()
    for epoch, order in epoch_orders(n, config.epochs, seed=config.seed, stream=SMALL_NET_EPOCH_ORDER):
        totals = dict.fromkeys(totals, 0.0)
        for position in range(per_epoch):
            batch = images[order[position * config.batch_size : (position + 1) * config.batch_size]]
            loss, reconstruction, kl = (v.mean() for v in model.negative_elbo(batch, noise))
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            for key, value in zip(totals, (loss, reconstruction, kl)):
                totals[key] += value.item() / per_epoch
        log(f"epoch {epoch + 1}/{config.epochs} negative ELBO {totals['loss']:.1f} (KL {totals['kl']:.1f})")
    return {k: v.detach().clone() for k, v in model.eval().state_dict().items()}, totals


@dataclass(frozen=True, kw_only=True)
class UnconditionalVAERecipe(RecipeFields):
    """The CLD VAE (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes:
        name: model name within its domain.
        arch_kwargs: keyword arguments of :class:`UnconditionalVAE`.
        config: the training configuration.
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        measure_quality: ``(vae in eval mode, config) -> {metric: value}``.
        notes: lines for the card.
    """

    role: str = "minimality_vae"
    architecture: str = "unconditional_vae"
    interface: str = (
        "encode(x) -> posterior mean and log-variance of z (N×latent each); forward(x) -> the reconstruction in [0, 1]."
    )

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        images = data.images if config.n is None else data.images[: config.n]
        state, totals = train_unconditional_vae(images, self.arch_kwargs, config)
        vae = UnconditionalVAE(**dict(self.arch_kwargs))
        vae.load_state_dict(state)
        vae.eval()
        with torch.no_grad():
            quality = {
                "final_negative_elbo": totals["loss"],
                "final_kl": totals["kl"],
                **self.measure_quality(vae, config),
            }
        return GenerativeTrainResult(state_dict=state, quality=quality, examples=int(images.shape[0]))
