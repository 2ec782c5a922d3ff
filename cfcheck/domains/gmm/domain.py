"""The Gaussian-mixture toy of Park et al. (2023, "Geometric Remove-and-Retrain", §5.1) behind
the :class:`cfcheck.domains.base.Domain` protocol.

Two classes of equal probability; class k's points are N(μ_k, σ²·I) in D dimensions, with the
paper's D = 64, σ² = 0.3, μ₁ = (1, …, 1) and μ₂ = (−1, …, −1). Label 0 is the paper's class 1
(mean μ₁) and label 1 its class 2 (mean μ₂). The ground-truth feature is the direction
μ₁ − μ₂, which Park et al. find the input gradients of a trained classifier align with. The
domain has no structural causal model (no factors) and no optional capabilities; what it adds
is the exact diffusion denoiser of its data distribution (:mod:`.denoiser`), a perfect
stand-in for a trained diffusion model in GOAR's manifold projection.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from cfcheck.domains.base import BundledDomain, split_prefix_size

from . import denoiser
from .mixture import DIM, SPLIT_SEEDS, SPLIT_SIZES, VARIANCE, LabeledPoints, default_means, sample_mixture


class GMMDomain(BundledDomain):
    """Park et al.'s two-class Gaussian mixture (see the module docstring).

    Args:
        dim: dimension D (default 64; taken from ``means`` when only they are given).
        variance: σ², the variance of every coordinate within a class (default 0.3).
        means: 2×D class means, row k for label k (default ±(1, …, 1)).
    """

    name = "gmm"
    num_classes = 2
    class_names = ("mu1", "mu2")
    factor_names: tuple[str, ...] = ()
    categorical_factors: tuple[str, ...] = ()
    split_roles = {"train": "train", "selection": "val", "scored": "test", "reference": "reference"}
    model_roles: dict[str, tuple[str, ...]] = {"explained": ("mlp",), "retrained": ("mlp",)}
    capabilities: frozenset[str] = frozenset()
    #: GOAR strengths (multiples of the removal scale) when the profile sets none: Park et al.'s
    #: Fig. 3 orders the degraded features only with ten or so levels (measured: the areas for
    #: noise ratios 0–4 are monotone with ten levels; four levels tie two of them)
    goar_levels: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))

    def __init__(self, dim: int | None = None, variance: float = VARIANCE, means: object = None) -> None:
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ValueError(f"`dim` must be a positive int, got {dim!r}")
        if isinstance(variance, bool) or not isinstance(variance, (int, float)) or not 0 < variance < math.inf:
            raise ValueError(f"`variance` must be a positive finite number (σ² per coordinate), got {variance!r}")
        if means is None:
            centres = default_means(DIM if dim is None else dim)
        else:
            centres = torch.as_tensor(means, dtype=torch.float64).clone()
            expected = "2×D" if dim is None else f"2×{dim}"
            if (
                centres.ndim != 2
                or centres.shape[0] != 2
                or centres.shape[1] < 1
                or (dim is not None and centres.shape[1] != dim)
            ):
                raise ValueError(f"`means` must be {expected} (one row per class), got shape {tuple(centres.shape)}")
            if not bool(torch.isfinite(centres).all()):
                raise ValueError("`means` must be finite")
        self.means = centres
        self.variance = float(variance)
        self.dim = int(centres.shape[1])
        self.input_shape = (self.dim,)
        self._splits: dict[str, LabeledPoints] = {}

    # -- data ------------------------------------------------------------------------------
    def split(self, name: str, n: int | None = None) -> LabeledPoints:
        """A split, or its first ``n`` points (the same points whatever ``n``; deterministic,
        memoised per domain: treat the tensors as read-only)."""
        n = split_prefix_size(name, n, SPLIT_SIZES)
        if name not in self._splits:
            self._splits[name] = sample_mixture(SPLIT_SIZES[name], SPLIT_SEEDS[name], self.means, self.variance)
        full = self._splits[name]
        return LabeledPoints(x=full.x[:n], labels=full.labels[:n])

    def feature_direction(self) -> Tensor:
        """μ₁ − μ₂ (float32 D): label 0's mean minus label 1's, the ground-truth feature
        direction of Park et al. §5.1 (2·(1, …, 1) by default; not normalised)."""
        return (self.means[0] - self.means[1]).to(torch.float32)

    def class_feature(self, target: Tensor) -> Tensor:
        """μ_target − μ_other per row (float32 N×D): the ground-truth feature that raises the
        target class's evidence (±:meth:`feature_direction`)."""
        target = torch.as_tensor(target)
        if target.dtype != torch.int64 or target.ndim != 1 or bool(((target < 0) | (target > 1)).any()):
            raise ValueError(f"target must be an int64 vector of labels in {{0, 1}}, got {target!r}")
        sign = 1.0 - 2.0 * target.to(torch.float32)
        return sign[:, None] * self.feature_direction()[None, :]

    # -- the exact denoiser (see .denoiser) --------------------------------------------------
    def class_posterior(self, x: Tensor) -> Tensor:
        """p(label | x) of clean points (N×2): the Bayes-optimal classifier."""
        return denoiser.responsibilities(x, 1.0, self.means, self.variance)

    def responsibilities(self, x_t: Tensor, alpha_bar: float | Tensor) -> Tensor:
        """p(label | x_t) for x_t = √ᾱ·x₀ + √(1 − ᾱ)·ε (N×2)."""
        return denoiser.responsibilities(x_t, alpha_bar, self.means, self.variance)

    def posterior_mean(self, x_t: Tensor, alpha_bar: float | Tensor) -> Tensor:
        """E[x₀ | x_t] for x_t = √ᾱ·x₀ + √(1 − ᾱ)·ε (N×D; ᾱ a number or one per row, in [0, 1])."""
        return denoiser.posterior_mean(x_t, alpha_bar, self.means, self.variance)

    def predicted_noise(self, x_t: Tensor, alpha_bar: float | Tensor) -> Tensor:
        """(x_t − √ᾱ·E[x₀ | x_t]) / √(1 − ᾱ) = E[ε | x_t], the ε a perfect network predicts
        (N×D; 0 at ᾱ = 1)."""
        return denoiser.predicted_noise(x_t, alpha_bar, self.means, self.variance)

    def model_recipes(self) -> object:
        """The reference-model recipe table (:mod:`.recipes`)."""
        from .recipes import GMM_RECIPES

        return GMM_RECIPES

    def exact_denoiser(self) -> denoiser.MixtureDenoiser:
        """The perfect diffusion model of the mixture (GOAR's manifold projection needs no
        trained network here)."""
        return denoiser.MixtureDenoiser(self.means, self.variance)

    @property
    def pixel_grid(self) -> tuple[int, int, int] | None:
        """How pixel-removal benchmarks (ROAD's neighbour imputation) lay the coordinates out:
        a √D×√D single-channel grid in coordinate order (8×8 for the paper's D = 64), or None
        when D is not a square. The layout is cfcheck's choice; the coordinates are
        exchangeable, so any layout gives the same distribution."""
        side = math.isqrt(self.dim)
        return (1, side, side) if side * side == self.dim else None

    def __repr__(self) -> str:
        if self.variance == VARIANCE and torch.equal(self.means, default_means(self.dim)):
            return f"GMMDomain(dim={self.dim})" if self.dim != DIM else "GMMDomain()"
        return f"GMMDomain(dim={self.dim}, variance={self.variance}, means=<2×{self.dim}>)"
