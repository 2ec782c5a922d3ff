"""The Gaussian mixture of Park et al. (2023, §5.1) itself: its constants, its split seeds and a
seeded sampler. :mod:`.domain` wraps it as a cfcheck domain; :mod:`.recipes` trains on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["DIM", "SPLIT_SEEDS", "SPLIT_SIZES", "VARIANCE", "LabeledPoints", "default_means", "sample_mixture"]

#: The paper's dimension, per-coordinate variance and (absolute) mean entry.
DIM = 64
VARIANCE = 0.3

#: Each split is its own fixed seed, so the splits are independent draws. Roles as in morpho:
#: train (explained classifiers), val (model selection, feature standardisation), test (the
#: inputs that are scored), reference (real points for realism references; never trained on).
SPLIT_SEEDS = {"train": 61_000, "val": 62_000, "test": 63_000, "reference": 65_000}
SPLIT_SIZES = {"train": 20_000, "val": 2_000, "test": 2_000, "reference": 5_000}


@dataclass(frozen=True)
class LabeledPoints:
    """Points of the mixture and their classes.

    Attributes:
        x: float32 N×D, the points (the classifier's input; the counterpart of morpho's ``images``).
        labels: int64 N, the class of each point: 0 for mean μ₁, 1 for mean μ₂.
    """

    x: Tensor
    labels: Tensor

    def __post_init__(self) -> None:
        if self.x.ndim != 2 or self.labels.shape != (self.x.shape[0],):
            raise ValueError(
                f"LabeledPoints parts disagree: x {tuple(self.x.shape)} (expected N×D), "
                f"labels {tuple(self.labels.shape)} (expected N)"
            )

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def images(self) -> Tensor:
        """The points, under the name the generic training and scoring code reads."""
        return self.x


def default_means(dim: int) -> Tensor:
    """The paper's class means as a float64 2×D tensor: rows (1, …, 1) and (−1, …, −1)."""
    return torch.stack([torch.ones(dim, dtype=torch.float64), -torch.ones(dim, dtype=torch.float64)])


def sample_mixture(n: int, seed: int, means: Tensor, variance: float) -> LabeledPoints:
    """``n`` points of the equal-prior mixture of N(means[k], variance·I), from ``seed``: the
    labels are drawn first (uniform over the components), then standard normal noise."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, means.shape[0], (n,), generator=generator)
    noise = torch.randn(n, means.shape[1], generator=generator, dtype=torch.float64)
    x = means.to(torch.float64)[labels] + math.sqrt(variance) * noise
    return LabeledPoints(x=x.to(torch.float32), labels=labels)
