"""A conditional GAN image mechanism with an encoder for abduction (Dash et al.'s conditional ALI/BiGAN
as Melistas et al. 2024 benchmark it, §3.2 eq. 5–6 and appendix A.4), scaled down for a CPU.

Three networks in one module (one weight file), each given the parents c as Melistas et al. do:
concatenated with the image as constant channels for the encoder and the discriminator, with the
latent for the generator.

* generator G(z, c): [z, c] → Linear → 4w×4×4 → 3 × transposed conv (stride 2) → sigmoid, in [0, 1];
* encoder E(x, c): 3 × conv (stride 2) → Linear → z (deterministic);
* discriminator D(x, z, c): an image branch (3 × conv, dropout 0.2) and a latent branch (Linear,
  dropout 0.2), joined by two linear layers into one logit; every layer spectrally normalised (not in
  Melistas et al.'s: without it, on our short CPU schedule, D won within 200 steps, loss 0.03 against
  the generator's 16).

The counterfactual is x* = G(E(x, c), c*) (eq. 6). There is no pixel noise to abduct, so the null
intervention returns the reconstruction G(E(x, c), c), not x.
"""

from __future__ import annotations

import torch
from torch import nn

from ..vae.network import ConditionedNetwork

__all__ = ["ConditionalGAN"]


def _act() -> nn.LeakyReLU:
    return nn.LeakyReLU(0.2)


def _sn(layer: nn.Module) -> nn.Module:
    return nn.utils.parametrizations.spectral_norm(layer)


class ConditionalGAN(ConditionedNetwork):
    """Encoder, generator and discriminator of a conditional BiGAN for images of side 32.

    Args:
        condition_features: length of the condition vector c.
        latent_dim: dimension of z.
        width: channels of the first convolution (doubling twice).
        channels: image channels.
        standardised_columns: leading columns of c standardised with the stored statistics.

    Example:
        >>> gan = ConditionalGAN(condition_features=3)
        >>> z = gan.encode(torch.rand(2, 1, 32, 32), torch.zeros(2, 3))
        >>> gan.decode(z, torch.zeros(2, 3)).shape
        torch.Size([2, 1, 32, 32])
    """

    def __init__(
        self,
        condition_features: int,
        latent_dim: int = 32,
        width: int = 32,
        channels: int = 1,
        standardised_columns: int = 0,
    ) -> None:
        super().__init__(condition_features, channels, standardised_columns, latent_dim=latent_dim, width=width)
        self.latent_dim, self.width = latent_dim, width
        w, k = width, condition_features
        self.generator_input = nn.Sequential(nn.Linear(latent_dim + k, 4 * w * 16), _act())
        self.generator = nn.Sequential(
            nn.ConvTranspose2d(4 * w, 2 * w, 4, 2, 1),
            _act(),
            nn.ConvTranspose2d(2 * w, w, 4, 2, 1),
            _act(),
            nn.ConvTranspose2d(w, channels, 4, 2, 1),
            nn.Sigmoid(),
        )
        self.encoder = nn.Sequential(
            nn.Conv2d(channels + k, w, 4, 2, 1),
            _act(),
            nn.Conv2d(w, 2 * w, 4, 2, 1),
            _act(),
            nn.Conv2d(2 * w, 4 * w, 4, 2, 1),
            _act(),
            nn.Flatten(),
            nn.Linear(4 * w * 16, latent_dim),
        )
        self.critic_image = nn.Sequential(
            _sn(nn.Conv2d(channels + k, w, 4, 2, 1)),
            _act(),
            nn.Dropout(0.2),
            _sn(nn.Conv2d(w, 2 * w, 4, 2, 1)),
            _act(),
            nn.Dropout(0.2),
            _sn(nn.Conv2d(2 * w, 4 * w, 4, 2, 1)),
            _act(),
            nn.Flatten(),
        )
        self.critic_latent = nn.Sequential(_sn(nn.Linear(latent_dim, 256)), _act(), nn.Dropout(0.2))
        self.critic_joint = nn.Sequential(
            _sn(nn.Linear(4 * w * 16 + 256, 256)), _act(), nn.Dropout(0.2), _sn(nn.Linear(256, 1))
        )

    def _with_condition(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        self._check_images(x)
        c = self._standardise(condition, x.shape[0])
        return torch.cat([x, c[:, :, None, None].expand(-1, -1, x.shape[2], x.shape[3])], 1)

    def encode(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """The abducted latent E(x, c), N × latent_dim."""
        return self.encoder(self._with_condition(x, condition))

    def decode(self, z: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """The generated image G(z, c), N×C×32×32 in [0, 1]."""
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(f"z must be N×{self.latent_dim}, got {tuple(z.shape)}")
        c = self._standardise(condition, z.shape[0])
        return self.generator(self.generator_input(torch.cat([z, c], 1)).view(-1, 4 * self.width, 4, 4))

    def discriminate(self, x: torch.Tensor, z: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """D's logit (N) that (x, z) is a real image with its encoding rather than a generated pair."""
        features = torch.cat([self.critic_image(self._with_condition(x, condition)), self.critic_latent(z)], 1)
        return self.critic_joint(features).squeeze(1)

    def reconstruct(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """G(E(x, c), c)."""
        return self.decode(self.encode(x, condition), condition)

    def counterfactual(
        self,
        x: torch.Tensor,
        condition: torch.Tensor,
        counterfactual_condition: torch.Tensor,
        *,
        abduct_pixel_noise: bool = False,
    ) -> torch.Tensor:
        """x* = G(E(x, c), c*) (eq. 6). ``abduct_pixel_noise`` must be False: a GAN has no pixel noise."""
        if abduct_pixel_noise:
            raise ValueError("a GAN has no pixel noise to abduct; use abduct_pixel_noise=False")
        return self.decode(self.encode(x, condition), counterfactual_condition)

    def forward(self, x: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """The reconstruction G(E(x, c), c) (what a registry-built module's call returns)."""
        return self.reconstruct(x, condition)
