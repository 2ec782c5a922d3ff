"""The latent space z of Bex et al. (appendix A.3.1) and the causal oracle on it.

z ∈ R¹¹ = character embedding (3) | font embedding (3) | x, y, rotation, scale, inverse colour,
every coordinate standardised with the mean and standard deviation of the scenario's train
split (A.3.2). Bex et al. learn the two 3-d embeddings inside their generator; here they are
fixed tables, so the latent of every sample is known exactly before any model exists (a
generator trained later takes them as frozen inputs): points spread evenly on a sphere of
radius √3 (a Fibonacci lattice, so no two categories are close), assigned to the categories by
a fixed seeded permutation (so the parity of a character has no geometric pattern).

The causal oracle h_causal(z) decodes the character as the nearest character embedding (L2,
in standardised coordinates) and returns its parity, the causal label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .fonts import NUM_CHARACTERS, NUM_FONTS
from .sampling import GlyphFactors

EMBEDDING_DIM = 3
CONTINUOUS_NAMES = ("x", "y", "rotation", "scale", "inverse")
LATENT_NAMES = (
    *(f"character_{i}" for i in range(EMBEDDING_DIM)),
    *(f"font_{i}" for i in range(EMBEDDING_DIM)),
    *CONTINUOUS_NAMES,
)
LATENT_DIM = len(LATENT_NAMES)
CHARACTER_SLICE = slice(0, EMBEDDING_DIM)
FONT_SLICE = slice(EMBEDDING_DIM, 2 * EMBEDDING_DIM)
CONTINUOUS_SLICE = slice(2 * EMBEDDING_DIM, LATENT_DIM)
_CHARACTER_ASSIGNMENT_SEED = 21
_FONT_ASSIGNMENT_SEED = 22


def fibonacci_sphere(n: int, radius: float = math.sqrt(3.0)) -> torch.Tensor:
    """``n`` points spread evenly on a sphere (float64 n×3), in a deterministic order."""
    index = torch.arange(n, dtype=torch.float64) + 0.5
    height = 1.0 - 2.0 * index / n
    ring = torch.sqrt(1.0 - height**2)
    angle = index * math.pi * (3.0 - math.sqrt(5.0))
    return radius * torch.stack([ring * torch.cos(angle), ring * torch.sin(angle), height], dim=1)


def _assigned_embedding(n: int, seed: int) -> torch.Tensor:
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return fibonacci_sphere(n)[order].float()


#: Raw (unstandardised) embedding tables: row k is category k's 3-d embedding.
CHARACTER_EMBEDDING = _assigned_embedding(NUM_CHARACTERS, _CHARACTER_ASSIGNMENT_SEED)
FONT_EMBEDDING = _assigned_embedding(NUM_FONTS, _FONT_ASSIGNMENT_SEED)


def raw_latents(factors: GlyphFactors) -> torch.Tensor:
    """Unstandardised latents (float32 N×11) of the factors, in ``LATENT_NAMES`` order."""
    continuous = torch.stack(
        [factors.shift_x, factors.shift_y, factors.rotation, factors.scale, factors.inverse], dim=1
    ).float()
    return torch.cat([CHARACTER_EMBEDDING[factors.character], FONT_EMBEDDING[factors.font], continuous], dim=1)


@dataclass(frozen=True)
class LatentStandardiser:
    """Per-coordinate standardisation of the latents, and the box explainers are clipped to.

    Attributes:
        mean, std: float32 11, the train split's mean and standard deviation per coordinate.
        low, high: float32 11, the train split's minimum and maximum per coordinate, standardised
            (Bex et al. clip every coordinate of a counterfactual to them).
    """

    mean: torch.Tensor
    std: torch.Tensor
    low: torch.Tensor
    high: torch.Tensor

    @classmethod
    def fit(cls, raw: torch.Tensor) -> LatentStandardiser:
        """Fitted to raw latents (N×11, N ≥ 2, every coordinate non-constant)."""
        if raw.ndim != 2 or raw.shape[1] != LATENT_DIM or raw.shape[0] < 2:
            raise ValueError(f"raw latents must be N×{LATENT_DIM} with N ≥ 2, got {tuple(raw.shape)}")
        raw64 = raw.double()
        mean, std = raw64.mean(0), raw64.std(0)
        if bool((std == 0).any()):
            raise ValueError("a latent coordinate is constant: cannot standardise it")
        standard = (raw64 - mean) / std
        return cls(mean.float(), std.float(), standard.min(0).values.float(), standard.max(0).values.float())

    def standardise(self, raw: torch.Tensor) -> torch.Tensor:
        return ((raw.double() - self.mean.double()) / self.std.double()).float()

    def unstandardise(self, z: torch.Tensor) -> torch.Tensor:
        return (z.double() * self.std.double() + self.mean.double()).float()

    def clip(self, z: torch.Tensor) -> torch.Tensor:
        """``z`` clipped to the train split's box, coordinate by coordinate."""
        return torch.maximum(torch.minimum(z, self.high), self.low)

    def embedding(self, table: torch.Tensor, part: slice) -> torch.Tensor:
        """An embedding table in standardised coordinates (rows = categories)."""
        return ((table.double() - self.mean[part].double()) / self.std[part].double()).float()


def nearest_category(z_part: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Index (int64, shape z_part.shape[:-1]) of the nearest row of ``table`` (L2) to each
    3-d vector in ``z_part``."""
    flat = z_part.reshape(-1, z_part.shape[-1]).double()
    distances = torch.cdist(flat, table.double())
    return distances.argmin(dim=1).reshape(z_part.shape[:-1])


def proximity_radius(table: torch.Tensor) -> float:
    """The largest pairwise L1 distance between rows of ``table``: Bex et al.'s proximity radius
    of a categorical attribute (any category is reachable from any other)."""
    return float(torch.cdist(table.double(), table.double(), p=1).max())
