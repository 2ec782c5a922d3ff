"""Toy classifiers and inputs for the reference-method tests, known by construction.

Tests get the helpers through the session fixture ``toys`` (the project imports test
modules with ``--import-mode=importlib``, so test files cannot import each other).

They are built here (not loaded from reference_models/) so these tests depend only on the
methods package and stay fast.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

NUM_CLASSES = 10


class MeanIntensityClassifier(nn.Module):
    """Predicts ``k`` when the image's mean intensity lies in [k/10, (k+1)/10).

    The logits ``−scale·(mean − (k + ½)/10)²`` are smooth, so gradient methods work, and the
    decision is computable by hand, so predictions on a bank are known exactly.
    """

    def __init__(self, scale: float = 2000.0) -> None:
        super().__init__()
        self.register_buffer("centres", (torch.arange(NUM_CLASSES, dtype=torch.float32) + 0.5) / 10)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.flatten(1).mean(dim=1, keepdim=True)
        return -self.scale * (mean - self.centres) ** 2


def frozen(module: nn.Module) -> nn.Module:
    """Eval mode with parameters that require no grad: the state the suites pass models in."""
    module.eval()
    for parameter in module.parameters():
        parameter.requires_grad_(False)
    return module


def linear_classifier(seed: int = 0, scale: float = 0.05) -> nn.Module:
    """A seeded linear classifier on raw pixels: every target is reachable by small edits."""
    generator = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, NUM_CLASSES))
    with torch.no_grad():
        model[1].weight.copy_(torch.randn(NUM_CLASSES, 32 * 32, generator=generator) * scale)
        model[1].bias.zero_()
    return frozen(model)


def small_cnn(seed: int = 0) -> nn.Module:
    """A randomly initialised (seeded) CNN: a realistic, non-linear architecture."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(16 * 8 * 8, NUM_CLASSES),
        )
    return frozen(model)


def random_images(n: int, seed: int) -> torch.Tensor:
    return torch.rand(n, 1, 32, 32, generator=torch.Generator().manual_seed(seed))


def other_targets(predictions: torch.Tensor, seed: int) -> torch.Tensor:
    """A target different from each prediction, drawn by ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    shift = torch.randint(1, NUM_CLASSES, predictions.shape, generator=generator)
    return (predictions + shift) % NUM_CLASSES


class Halfspace(nn.Module):
    """A two-class latent classifier: class 1 where w·z > b (logits −s, s with s = w·z − b)."""

    def __init__(self, w, b: float = 0.0) -> None:
        super().__init__()
        self.w, self.b = torch.tensor(w, dtype=torch.float32), float(b)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        score = z @ self.w - self.b
        return torch.stack([-score, score], dim=1)


@pytest.fixture(scope="session")
def toys() -> SimpleNamespace:
    return SimpleNamespace(
        NUM_CLASSES=NUM_CLASSES,
        MeanIntensityClassifier=MeanIntensityClassifier,
        Halfspace=Halfspace,
        frozen=frozen,
        linear_classifier=linear_classifier,
        small_cnn=small_cnn,
        random_images=random_images,
        other_targets=other_targets,
    )


@pytest.fixture
def linear_model() -> nn.Module:
    return linear_classifier()


@pytest.fixture
def mean_model() -> nn.Module:
    return frozen(MeanIntensityClassifier())


@pytest.fixture
def cnn_model() -> nn.Module:
    return small_cnn()
