"""The example's own architectures. cfcheck does not know them: the model store's manifest names
each network's builder (``digits_example.networks:<function>``) and its keyword arguments."""

from __future__ import annotations

import torch
from torch import nn


class SmallCNN(nn.Module):
    """The classifier the example explains: two 3×3 convolutions and a linear layer."""

    def __init__(self, width: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.AvgPool2d(2),
        )
        self.head = nn.Linear(2 * width * 16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


class MLP(nn.Module):
    """An oracle: a two-layer perceptron on the 64 pixels."""

    def __init__(self, hidden: int = 128, classes: int = 10) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class PoolCNN(nn.Module):
    """An oracle: a 5×5 convolution, max-pooling and a wide hidden layer (LeNet-like)."""

    def __init__(self, width: int = 24, classes: int = 10) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 5, padding=2),
            nn.Tanh(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(width * 16, 96),
            nn.Tanh(),
            nn.Linear(96, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class ForestLikeNet(nn.Module):
    """An oracle of a third kind: row and column projections (two 1-D views of the digit) mixed by
    a linear layer."""

    def __init__(self, width: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.rows = nn.Linear(8, width)
        self.columns = nn.Linear(8, width)
        self.head = nn.Sequential(nn.ReLU(), nn.Flatten(), nn.Linear(2 * 8 * width, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        image = x[:, 0]
        return self.head(torch.cat([self.rows(image), self.columns(image.transpose(1, 2))], 1))


class Embedding(nn.Module):
    """The domain embedding network: ``forward`` gives 32 features per image (FID, KID),
    ``feature_maps`` the activations the perceptual distance compares. Trained as a classifier
    (``classify``) on the oracle-training split."""

    def __init__(self, width: int = 16, dim: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), nn.ReLU())
        self.project = nn.Linear(2 * width * 16, dim)
        self.classifier = nn.Linear(dim, classes)

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        first = self.block1(x)
        return [first, self.block2(first)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.project(self.feature_maps(x)[-1].flatten(1)))

    def classify(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self(x))


def small_cnn(**kwargs: int) -> nn.Module:
    return SmallCNN(**kwargs)


def mlp(**kwargs: int) -> nn.Module:
    return MLP(**kwargs)


def pool_cnn(**kwargs: int) -> nn.Module:
    return PoolCNN(**kwargs)


def projection_net(**kwargs: int) -> nn.Module:
    return ForestLikeNet(**kwargs)


def embedding(**kwargs: int) -> nn.Module:
    return Embedding(**kwargs)
