"""Density and coverage of a fake set on the real samples' k-nearest-neighbour manifold
(Naeem et al. 2020, Reliable Fidelity and Diversity Metrics for Generative Models, §3).

Around every real sample X_i lies the ball B(X_i, NND_k(X_i)) whose radius is the Euclidean
distance from X_i to its k-th nearest *other* real sample. For M fake samples Y_j:

- **density** = (1 / (k·M)) Σ_j Σ_i 1[Y_j ∈ B(X_i, NND_k(X_i))]: how many real balls a fake
  sample lies in, on average, over k. Fakes drawn from the real distribution score about 1 in
  expectation; fakes crowded into dense real regions score above 1.
- **coverage** = (1 / N) Σ_i 1[∃ j: Y_j ∈ B(X_i, NND_k(X_i))]: the share of real balls that hold
  at least one fake sample, in [0, 1]. A fake set collapsed onto one mode covers only the
  balls around that mode.

Balls are closed (a fake at exactly the radius counts). Both are pure functions of the two
feature sets; no resampling or seeding happens here.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int
from cfcheck.metrics.realism import ArrayLike, _check_feature_pair

__all__ = ["KnnSets", "coverage", "density", "density_coverage", "knn_engine", "real_radii"]

#: Naeem et al. 2020 use k = 5 throughout.
DEFAULT_K = 5
#: :class:`KnnSets` keeps each real row's nearest 8k + 24 others for resampled radii.
_SHORTLIST_PER_K = 8


def _checked(real_features: object, fake_features: object, k: object) -> tuple[Tensor, Tensor, int]:
    real, fake = _check_feature_pair(real_features, fake_features)
    k = check_positive_int("k", k)
    if k >= real.shape[0]:
        raise ValueError(
            f"`k` must be smaller than the number of real samples (each ball's radius is the distance to the k-th "
            f"nearest *other* real sample), got k={k} with {real.shape[0]} real samples"
        )
    return real, fake, k


def real_radii(real: Tensor, k: int) -> Tensor:
    """Distance from every real row to its k-th nearest other real row (N float64 radii).

    Args:
        real: N×D float64 features, N > k (already validated by the caller).
        k: neighbour rank, ≥ 1.

    Returns:
        The N radii NND_k(X_i).

    Example:
        >>> real_radii(torch.tensor([[0.0], [1.0], [3.0]], dtype=torch.float64), 1).tolist()
        [1.0, 1.0, 2.0]
    """
    distances = torch.cdist(real, real)
    # the k+1 smallest distances of a row include the row itself (0); the last is the k-th other
    return distances.topk(k + 1, dim=1, largest=False).values[:, k]


def _inside(real: Tensor, fake: Tensor, k: int) -> Tensor:
    """N×M boolean matrix: fake j lies in the ball of real i."""
    return torch.cdist(real, fake) <= real_radii(real, k)[:, None]


def density_coverage(real_features: ArrayLike, fake_features: ArrayLike, k: int = DEFAULT_K) -> tuple[float, float]:
    """Density and coverage of ``fake_features`` with respect to ``real_features``.

    Args:
        real_features: N×D features of real samples (array or tensor, finite, N > k).
        fake_features: M×D features of generated (counterfactual) samples, M ≥ 2, same D.
        k: the neighbour rank that sets each real ball's radius (a positive int below N;
            Naeem et al. use 5).

    Returns:
        ``(density, coverage)``: density ≥ 0 (can exceed 1), coverage in [0, 1].

    Raises:
        ValueError / TypeError: when an argument is not as described above.

    Example:
        >>> real = torch.arange(8, dtype=torch.float64)[:, None]
        >>> density_coverage(real, real, k=2)
        (1.5, 1.0)
        >>> density_coverage(real, real + 100.0, k=2)
        (0.0, 0.0)
    """
    real, fake, k = _checked(real_features, fake_features, k)
    inside = _inside(real, fake, k)
    density_value = float(inside.sum(dtype=torch.float64)) / (k * fake.shape[0])
    coverage_value = float(inside.any(dim=1).double().mean())
    return density_value, coverage_value


def density(real_features: ArrayLike, fake_features: ArrayLike, k: int = DEFAULT_K) -> float:
    """Density (Naeem et al. 2020): (1/(kM)) Σ_j Σ_i 1[Y_j ∈ B(X_i, NND_k(X_i))].

    Args:
        real_features, fake_features, k: as for :func:`density_coverage`.

    Returns:
        The density, ≥ 0; about 1 in expectation for fakes from the real distribution.

    Example:
        >>> real = torch.arange(8, dtype=torch.float64)[:, None]
        >>> density(real, torch.full((4, 1), 3.5), k=2)
        1.0
    """
    return density_coverage(real_features, fake_features, k)[0]


def coverage(real_features: ArrayLike, fake_features: ArrayLike, k: int = DEFAULT_K) -> float:
    """Coverage (Naeem et al. 2020): (1/N) Σ_i 1[∃ j: Y_j ∈ B(X_i, NND_k(X_i))].

    Args:
        real_features, fake_features, k: as for :func:`density_coverage`.

    Returns:
        The share of real samples whose ball holds at least one fake, in [0, 1].

    Example:
        >>> real = torch.arange(8, dtype=torch.float64)[:, None]
        >>> coverage(real, torch.full((4, 1), 3.5), k=2)
        0.25
    """
    return density_coverage(real_features, fake_features, k)[1]


class KnnSets:
    """Density or coverage of one real set against fake sets and against resamples of both.

    The real-vs-real distances are computed once; a resample only gathers and ranks them, so
    scoring a counterfactual set, its real-vs-real floors and the CI's resamples against one
    reference costs one distance matrix per set. Results equal :func:`density` /
    :func:`coverage` on the gathered rows (a repeated real row is a neighbour at distance 0,
    as in the gathered set).

    Args:
        real_features: N×D real features (N > k).
        statistic: ``"density"`` or ``"coverage"``.
        k: the neighbour rank of the balls' radii.

    Example:
        >>> real = torch.arange(8, dtype=torch.float64)[:, None]
        >>> sets = KnnSets(real, "coverage", k=2)
        >>> sets(torch.full((4, 1), 3.5)), sets.resampled(real, np.array([[0, 1, 2, 3]]), np.array([[0, 1]])).tolist()
        (0.25, [1.0])
    """

    def __init__(self, real_features: ArrayLike, statistic: str, k: int = DEFAULT_K) -> None:
        if statistic not in ("density", "coverage"):
            raise ValueError(f"`statistic` must be 'density' or 'coverage', got {statistic!r}")
        self.real, _, self.k = _checked(real_features, real_features, k)
        self.statistic = statistic
        self._real_distances = torch.cdist(self.real, self.real)
        self._cross: tuple[Tensor, Tensor] | None = None  # (fake set, its N×M distances), the last one used
        # every row's nearest other rows, nearest first: a subset's k-th nearest member is almost
        # always among them (half-samples keep each with probability ½), so radii need no full ranking
        others = self._real_distances.clone().fill_diagonal_(torch.inf)
        shortlist = min(others.shape[0] - 1, _SHORTLIST_PER_K * self.k + 24)
        self._near_distances, self._near = others.topk(shortlist, dim=1, largest=False)

    def _score(self, inside: Tensor, fakes: int) -> float:
        if self.statistic == "density":
            return float(inside.sum(dtype=torch.float64)) / (self.k * fakes)
        return float(inside.any(dim=1).double().mean())

    def __call__(self, fake_features: ArrayLike) -> float:
        """The statistic of the whole real set against ``fake_features`` (M×D)."""
        _, fake, _ = _checked(self.real, fake_features, self.k)
        radii = self._real_distances.topk(self.k + 1, dim=1, largest=False).values[:, self.k]
        return self._score(torch.cdist(self.real, fake) <= radii[:, None], fake.shape[0])

    def resampled(self, fake_features: ArrayLike, real_index: np.ndarray, fake_index: np.ndarray) -> np.ndarray:
        """The statistic of ``real[real_index[r]]`` vs ``fake[fake_index[r]]`` for every row r
        (R×m and R×n row indices; each row must keep more than k real rows)."""
        _, fake, _ = _checked(self.real, fake_features, self.k)
        if self._cross is None or self._cross[0] is not fake_features:
            self._cross = (fake_features, torch.cdist(self.real, fake))  # type: ignore[assignment]
        cross = self._cross[1]  # type: ignore[index]
        values = np.empty(len(real_index), dtype=np.float64)
        for r, (rows, cols) in enumerate(zip(np.asarray(real_index), np.asarray(fake_index))):
            if len(rows) <= self.k:
                raise ValueError(f"a resample keeps {len(rows)} real rows; k = {self.k} needs more than k")
            rows_t, cols_t = torch.from_numpy(rows), torch.from_numpy(cols)
            values[r] = self._score(cross[rows_t][:, cols_t] <= self._subset_radii(rows_t)[:, None], len(cols))
        return values

    def _subset_radii(self, rows: Tensor) -> Tensor:
        """NND_k of every row of the subset ``rows`` among the subset's other rows."""
        member = torch.zeros(self.real.shape[0], dtype=torch.bool)
        member[rows] = True
        if int(member.sum()) == len(rows):  # no repeated rows: walk each row's shortlist
            found = member[self._near[rows]].cumsum(dim=1)
            if bool((found[:, -1] >= self.k).all()):
                position = (found >= self.k).int().argmax(dim=1, keepdim=True)
                return self._near_distances[rows].gather(1, position).squeeze(1)
        # repeated rows (a bootstrap: a copy is a neighbour at distance 0) or a short shortlist
        return self._real_distances[rows][:, rows].topk(self.k + 1, dim=1, largest=False).values[:, self.k]


def knn_engine(statistic: object) -> partial[KnnSets] | None:
    """The :class:`KnnSets` engine of :func:`density` or :func:`coverage` (with k = 5), else None."""
    if statistic is density:
        return partial(KnnSets, statistic="density")
    return partial(KnnSets, statistic="coverage") if statistic is coverage else None
