"""The models of the ``scm_shapes`` test domain (:mod:`tests.own_domains.scm_shapes`), as a user's
model store names them (``tests.own_domains.scm_shapes_nets:<builder>``).

* :class:`SizeBrightnessReader` — a two-headed anti-causal predictor (``forward`` gives a dict
  ``{"size": N, "brightness": N}``): brightness is the brightest pixel (every shape has a fully
  covered interior pixel), size a quarter of the anti-aliased extents (the column and row profiles,
  in units of the brightness) of the shape's ``2·size`` box.
* :class:`TypeReader` — the type's anti-causal predictor (3 logits): the shape's fill of its box
  (disc π/4, square 1, triangle 1/2), nearest prototype first.
* :func:`fixed_embedding` — a fixed, seeded random convolutional feature map (``forward``: N×32
  pooled features; ``feature_maps``: its two blocks, for the perceptual distance).
* :class:`VAE` — the unconditional VAE of CLD (``encode`` gives the posterior mean and
  log-variance), trained by :func:`train_vae`.
"""

from __future__ import annotations

import torch
from torch import nn

LATENT = 8
#: the type's fill of its bounding box: disc, square, triangle
FILLS = (3.14159265 / 4, 1.0, 0.5)


def _profiles(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(brightness, width, height) of each N×1×H×W image: its brightest pixel, and the summed
    column and row maxima in units of it."""
    grey = x.float().mean(1)
    level = grey.flatten(1).amax(1).clamp_min(1e-3)
    unit = grey / level[:, None, None]
    return level, unit.amax(1).sum(1), unit.amax(2).sum(1)


class SizeBrightnessReader(nn.Module):
    """Reads ``size`` and ``brightness`` off an image in closed form (a two-headed predictor)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.ones(2))  # weights to store (a store keeps tensors)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        level, width, height = _profiles(x)
        return {"size": self.scale[0] * (width + height) / 4, "brightness": self.scale[1] * level}


class TypeReader(nn.Module):
    """Reads ``type`` off an image: logits −50·|fill − prototype| over disc, square, triangle."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fills", torch.tensor(FILLS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        level, width, height = _profiles(x)
        area = x.float().mean(1).flatten(1).sum(1) / level
        fill = area / (width * height).clamp_min(1e-3)
        return -50.0 * (fill[:, None] - self.fills[None]).abs()


class Embedding(nn.Module):
    """A fixed feature map (never trained): the closed-form readings of size, brightness and fill, and
    the mean activations of a seeded random convolutional block (``feature_maps``: its two blocks).
    A domain of other readings subclasses it and overrides :meth:`readings`."""

    def __init__(self, width: int = 4, channels: int = 1) -> None:
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(channels, width, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU())

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        first = self.block1(x)
        return [first, self.block2(first)]

    def readings(self, x: torch.Tensor) -> torch.Tensor:
        """N×3: size, brightness and fill, read in closed form."""
        level, width, height = _profiles(x)
        fill = x.float().mean(1).flatten(1).sum(1) / level / (width * height).clamp_min(1e-3)
        return torch.stack([(width + height) / 4, level, fill], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.readings(x), self.feature_maps(x)[-1].mean((2, 3))], 1)


class VAE(nn.Module):
    """A small unconditional MLP VAE of images of ``pixels`` values (28×28 grey by default)."""

    def __init__(self, latent: int = LATENT, pixels: int = 784) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(pixels, 128), nn.ReLU())
        self.mean, self.log_var = nn.Linear(128, latent), nn.Linear(128, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, 128), nn.ReLU(), nn.Linear(128, pixels), nn.Sigmoid())

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(x)
        return self.mean(hidden), self.log_var(hidden).clamp(-8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encode(x)[0]).view_as(x)


def type_reader() -> nn.Module:
    return TypeReader()


def size_brightness_reader() -> nn.Module:
    return SizeBrightnessReader()


def fixed_embedding() -> nn.Module:
    torch.manual_seed(0)
    return Embedding()


def vae(latent: int = LATENT, pixels: int = 784) -> nn.Module:
    return VAE(latent, pixels)


def train_vae(images: torch.Tensor, epochs: int = 30, seed: int = 0) -> VAE:
    """The ELBO (Bernoulli likelihood) with Adam, batches of 64 in a seeded order, one CPU thread."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        model = VAE(pixels=images[0].numel())
        optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
        generator = torch.Generator().manual_seed(seed)
        for _ in range(epochs):
            order = torch.randperm(len(images), generator=generator)
            for start in range(0, len(order), 64):
                x = images[order[start : start + 64]]
                mean, log_var = model.encode(x)
                z = mean + torch.randn(mean.shape, generator=generator) * (0.5 * log_var).exp()
                recon = model.decoder(z).view_as(x)
                nll = nn.functional.binary_cross_entropy(recon, x, reduction="sum")
                kl = -0.5 * (1 + log_var - mean**2 - log_var.exp()).sum()
                optimiser.zero_grad()
                ((nll + kl) / len(x)).backward()
                optimiser.step()
        return model.eval()
    finally:
        torch.set_num_threads(previous)
