"""The example's own architectures. cfcheck does not know them: the model store's manifest names each
network's builder (``digits_scm_example.networks:<function>``) and its keyword arguments.

* :class:`DigitPredictor` — the anti-causal predictor of ``digit`` (10 logits);
* :class:`MeasurePredictor` — one two-headed anti-causal predictor of ``width`` and ``ink``
  (``forward`` gives a dict of N readings in the attributes' own units);
* :class:`Embedding` — the domain embedding (``forward``: N×32 features; ``feature_maps``: its two blocks);
* :class:`VAE` — the unconditional VAE of the minimality score (``encode``: posterior mean, log-variance);
* :class:`ConditionalVAE` — the example's SCM generator's image mechanism: ``encode(x, attributes)``
  abducts the exogenous latent, ``decode(z, attributes)`` draws the image under (new) attributes.
"""

from __future__ import annotations

import torch
from torch import nn

#: the continuous attributes' scales (mean, standard deviation over the table), for the networks' inputs and outputs
SCALES = {"width": (2.5, 0.45), "ink": (0.305, 0.045)}


def _conv(width: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(width, 2 * width, 3, padding=1, stride=2),
        nn.ReLU(),
        nn.Flatten(),
    )


class DigitPredictor(nn.Module):
    """Reads ``digit`` off an image: a small CNN, 10 logits."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(_conv(width), nn.Linear(2 * width * 16, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class MeasurePredictor(nn.Module):
    """Reads ``width`` and ``ink`` off an image (a small CNN regressing both, in their own units)."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(_conv(width), nn.Linear(2 * width * 16, 64), nn.ReLU(), nn.Linear(64, 2))

    def standardised(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out = self.net(x)
        return {name: out[:, i] * SCALES[name][1] + SCALES[name][0] for i, name in enumerate(SCALES)}


class Embedding(nn.Module):
    """The domain embedding network, trained as a digit classifier (``classify``)."""

    def __init__(self, width: int = 16, dim: int = 32) -> None:
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), nn.ReLU())
        self.project = nn.Linear(2 * width * 16, dim)
        self.classifier = nn.Linear(dim, 10)

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        first = self.block1(x)
        return [first, self.block2(first)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.project(self.feature_maps(x)[-1].flatten(1)))

    def classify(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self(x))


class VAE(nn.Module):
    """A small unconditional MLP VAE of the 8×8 images (minimality)."""

    def __init__(self, latent: int = 6) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU())
        self.mean, self.log_var = nn.Linear(128, latent), nn.Linear(128, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, 128), nn.ReLU(), nn.Linear(128, 64), nn.Sigmoid())

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(x)
        return self.mean(hidden), self.log_var(hidden).clamp(-8, 8)

    def decode(self, z: torch.Tensor, attributes: torch.Tensor | None = None) -> torch.Tensor:
        return self.decoder(z).view(-1, 1, 8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode(x)[0])


def condition(attributes: dict[str, torch.Tensor]) -> torch.Tensor:
    """N×12 conditioning vector: the digit one-hot, then width and ink standardised."""
    digit = nn.functional.one_hot(torch.as_tensor(attributes["digit"]).long(), 10).float()
    scaled = [(torch.as_tensor(attributes[n]).float() - m) / s for n, (m, s) in SCALES.items()]
    return torch.cat([digit, torch.stack(scaled, 1)], 1)


class ConditionalVAE(nn.Module):
    """A conditional MLP VAE of the 8×8 images given the 12-dimensional attribute condition."""

    def __init__(self, latent: int = 4, hidden: int = 256) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64 + 12, hidden), nn.ReLU())
        self.mean, self.log_var = nn.Linear(hidden, latent), nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent + 12, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 64)
        )

    def encode(self, x: torch.Tensor, attributes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(torch.cat([x.flatten(1), attributes], 1))
        return self.mean(hidden), self.log_var(hidden).clamp(-8, 8)

    def decode(self, z: torch.Tensor, attributes: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.decoder(torch.cat([z, attributes], 1))).view(-1, 1, 8, 8)


def digit_predictor(**kwargs: int) -> nn.Module:
    return DigitPredictor(**kwargs)


def measure_predictor(**kwargs: int) -> nn.Module:
    return MeasurePredictor(**kwargs)


def embedding(**kwargs: int) -> nn.Module:
    return Embedding(**kwargs)


def vae(**kwargs: int) -> nn.Module:
    return VAE(**kwargs)


def conditional_vae(**kwargs: int) -> nn.Module:
    return ConditionalVAE(**kwargs)
