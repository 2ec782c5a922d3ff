"""The test domains' own architectures, unknown to cfcheck: the model store's manifest names each
network's builder (``tests.own_domains.nets:<function>``) and its keyword arguments.

Every network takes any channel count and image size (adaptive pooling before the heads), so one
set of builders serves every scene. The explained classifier and the three oracles differ in
architecture (kernel sizes, pooling, activations, depth), as an oracle committee should.
"""

from __future__ import annotations

import torch
from torch import nn


class Standardise(nn.Module):
    """Per-image standardisation (each channel's mean removed, divided by the image's spread): the
    scenes' colours and brightness are random style, so every network starts by discounting them."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        centred = x - x.mean(dim=(2, 3), keepdim=True)
        return centred / (centred.std(dim=(1, 2, 3), keepdim=True) + 0.05)


class ExplainedCNN(nn.Module):
    """The classifier cfcheck explains: three 3×3 convolutions, two max-pools and a linear head."""

    def __init__(self, channels: int = 3, classes: int = 3, width: int = 16) -> None:
        super().__init__()
        self.features = nn.Sequential(
            Standardise(),
            nn.Conv2d(channels, width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
        )
        self.head = nn.Linear(2 * width * 4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


class LeNetOracle(nn.Module):
    """An oracle: 5×5 convolutions with tanh and max-pooling, then a hidden layer (LeNet-like)."""

    def __init__(self, channels: int = 3, classes: int = 3, width: int = 12) -> None:
        super().__init__()
        self.net = nn.Sequential(
            Standardise(),
            nn.Conv2d(channels, width, 5, padding=2),
            nn.Tanh(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 5, padding=2),
            nn.Tanh(),
            nn.AdaptiveMaxPool2d(3),
            nn.Flatten(),
            nn.Linear(2 * width * 9, 64),
            nn.Tanh(),
            nn.Linear(64, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class StridedOracle(nn.Module):
    """An oracle: strided 3×3 convolutions with GELU and a global max-pool (no spatial head)."""

    def __init__(self, channels: int = 3, classes: int = 3, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(
            Standardise(),
            nn.Conv2d(channels, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(width, width + width // 2, 3, padding=1),
            nn.GELU(),
            nn.Conv2d(width + width // 2, 2 * width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.AdaptiveMaxPool2d(1),
            nn.Flatten(),
            nn.Linear(2 * width, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class WideShallowOracle(nn.Module):
    """An oracle: one wide 7×7 convolution, 4×4 max-pooling and a two-layer perceptron."""

    def __init__(self, channels: int = 3, classes: int = 3, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(
            Standardise(),
            nn.Conv2d(channels, width, 7, padding=3),
            nn.ReLU(),
            nn.MaxPool2d(4),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
            nn.Linear(width * 16, 96),
            nn.ReLU(),
            nn.Linear(96, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Embedding(nn.Module):
    """The domain network: ``forward`` gives ``dim`` features per image (FID, KID),
    ``feature_maps`` the activations the perceptual distance compares; trained as a classifier
    through :meth:`classify`."""

    def __init__(self, channels: int = 3, classes: int = 3, width: int = 16, dim: int = 32) -> None:
        super().__init__()
        self.block1 = nn.Sequential(Standardise(), nn.Conv2d(channels, width, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU())
        self.block3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU())
        self.project = nn.Sequential(nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(2 * width * 4, dim))
        self.classifier = nn.Linear(dim, classes)

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        first = self.block1(x)
        second = self.block2(first)
        return [first, second, self.block3(second)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.project(self.feature_maps(x)[-1]))

    def classify(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self(x))


def explained_cnn(**kwargs: int) -> nn.Module:
    """Builder of :class:`ExplainedCNN`."""
    return ExplainedCNN(**kwargs)


def lenet_oracle(**kwargs: int) -> nn.Module:
    """Builder of :class:`LeNetOracle`."""
    return LeNetOracle(**kwargs)


def strided_oracle(**kwargs: int) -> nn.Module:
    """Builder of :class:`StridedOracle`."""
    return StridedOracle(**kwargs)


def wide_shallow_oracle(**kwargs: int) -> nn.Module:
    """Builder of :class:`WideShallowOracle`."""
    return WideShallowOracle(**kwargs)


def embedding(**kwargs: int) -> nn.Module:
    """Builder of :class:`Embedding`."""
    return Embedding(**kwargs)
