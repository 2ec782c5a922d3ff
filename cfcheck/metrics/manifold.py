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

import hashlib
import weakref
from functools import partial
from typing import cast

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int
from cfcheck.metrics.realism import ArrayLike, RealSideTerms, _check_feature_pair, compute_real_side

__all__ = ["KnnSets", "coverage", "density", "density_coverage", "knn_engine", "real_radii"]

#: Naeem et al. 2020 use k = 5 throughout.
DEFAULT_K = 5
#: :class:`KnnSets` keeps each real row's nearest 8k + 24 others for resampled radii.
_SHORTLIST_PER_K = 8
#: entries of one block of resamples × real rows × shortlist (resamples are ranked in blocks)
_BLOCK_ENTRIES = 4_000_000
#: a position marking a subset the shortlist cannot rank (below every level, so no pair is held)
_UNRANKED = -2
#: ranked resamples of the engines sharing one set of reference terms, by the id of its radii
#: tensor (with a weak reference to it: an entry goes when the terms do)
_RANKED: dict[int, tuple[weakref.ref[Tensor], dict[bytes, Tensor]]] = {}


def _shared_memo(anchor: Tensor) -> dict[bytes, Tensor]:
    """The memo of the engines whose reference terms include ``anchor``."""
    key = id(anchor)
    entry = _RANKED.get(key)
    if entry is None or entry[0]() is not anchor:

        def forget(_: object) -> None:
            _RANKED.pop(key, None)

        entry = (weakref.ref(anchor, forget), {})
        _RANKED[key] = entry
    return entry[1]


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

    The real-vs-real distances are computed once and reduced to what the scores read: every
    row's radius and its nearest other rows (a shortlist). A resample ranks the shortlist
    instead of the distances, and only the (real, fake) pairs a ball could ever hold are
    compared, so scoring a counterfactual set, its real-vs-real floors and the CI's resamples
    costs one distance matrix per set. Results equal :func:`density` / :func:`coverage` on the
    gathered rows (a repeated real row is a neighbour at distance 0, as in the gathered set).

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
        #: what the floors and values are keyed by, and what the reference's own terms are keyed by
        #: (density and coverage share those terms)
        self.name, self.reference_key = f"{statistic}(k={self.k})", f"knn(k={self.k})"
        self._terms: dict[str, Tensor] | None = None  # radii, shortlist: computed on first use or loaded
        self._ranked: dict[bytes, Tensor] = {}  # ranked resamples by their rows' digest
        #: the resamples' ranked radii, a function of the real rows drawn alone
        self.real_side: RealSideTerms = compute_real_side
        self._distances: Tensor | None = None  # N×N, only for resamples the shortlist cannot rank
        self._to_fakes: tuple[object, Tensor] | None = None  # the last fake set and its N×M distances
        self._pairs: tuple[object, Tensor, Tensor, Tensor] | None = None  # the last fake set's candidate pairs

    def _reference_state(self) -> dict[str, Tensor]:
        """The reference's own terms: radii and, for every row, its nearest other rows, nearest
        first (a subset's k-th nearest member is almost always among them: half-samples keep
        each with probability ½, so radii of subsets need no full ranking)."""
        distances = torch.cdist(self.real, self.real)
        radii = distances.topk(self.k + 1, dim=1, largest=False).values[:, self.k]
        shortlist = min(distances.shape[0] - 1, _SHORTLIST_PER_K * self.k + 24)
        near_distances, near = distances.fill_diagonal_(torch.inf).topk(shortlist, dim=1, largest=False)
        return {"radii": radii, "near_distances": near_distances, "near": near.int()}

    def state(self) -> dict[str, Tensor]:
        """The reference's own terms as tensors, computed if they were not yet: what
        :meth:`load_state` takes to skip computing the real-vs-real distances again."""
        if self._terms is None:
            self.load_state(self._reference_state())
        terms = cast(dict[str, Tensor], self._terms)
        return {**terms, "near": terms["near"].int()}

    def load_state(self, state: dict[str, Tensor]) -> None:
        """Use terms from :meth:`state` (of an engine over the same real rows and k). Engines given
        the same tensors share their ranked resamples (density's and coverage's are the same)."""
        self._terms = {"radii": state["radii"], "near_distances": state["near_distances"], "near": state["near"].long()}
        self._ranked = _shared_memo(state["radii"])

    @property
    def _radii(self) -> Tensor:
        return self.state()["radii"] if self._terms is None else self._terms["radii"]

    @property
    def _near_distances(self) -> Tensor:
        return self.state()["near_distances"] if self._terms is None else self._terms["near_distances"]

    @property
    def _near(self) -> Tensor:
        if self._terms is None:
            self.state()
        return cast(dict[str, Tensor], self._terms)["near"]

    def _score(self, inside: Tensor, fakes: int) -> float:
        if self.statistic == "density":
            return float(inside.sum(dtype=torch.float64)) / (self.k * fakes)
        return float(inside.any(dim=1).double().mean())

    def __call__(self, fake_features: ArrayLike) -> float:
        """The statistic of the whole real set against ``fake_features`` (M×D)."""
        _, fake, _ = _checked(self.real, fake_features, self.k)
        return self._score(self._distances_to(fake_features, fake) <= self._radii[:, None], fake.shape[0])

    def resampled(self, fake_features: ArrayLike, real_index: np.ndarray, fake_index: np.ndarray) -> np.ndarray:
        """The statistic of ``real[real_index[r]]`` vs ``fake[fake_index[r]]`` for every row r
        (R×m and R×n row indices; each row must keep more than k real rows)."""
        _, fake, _ = _checked(self.real, fake_features, self.k)
        real_index, fake_index = np.asarray(real_index), np.asarray(fake_index)
        if real_index.shape[1] <= self.k:
            raise ValueError(f"a resample keeps {real_index.shape[1]} real rows; k = {self.k} needs more than k")
        cross, pair_real, pair_fake, level = self._candidate_pairs(fake_features, fake)
        positions = self._ranked_positions(real_index)
        values = np.empty(len(real_index), dtype=np.float64)
        block = max(1, _BLOCK_ENTRIES // self._near.numel())
        for start in range(0, len(real_index), block):
            rows = torch.from_numpy(real_index[start : start + block])
            cols = torch.from_numpy(fake_index[start : start + block])
            position = positions[start : start + block].long()
            fake_counts = torch.zeros(len(cols), fake.shape[0], dtype=torch.long).scatter_add_(
                1, cols, torch.ones_like(cols)
            )
            # a pair (i, j) is inside i's ball iff its level is at most i's radius position (−1: i not drawn)
            held = (position[:, pair_real] >= level) & (fake_counts[:, pair_fake] > 0)
            if self.statistic == "density":
                counts = (held * fake_counts[:, pair_fake]).sum(1)
                scores = counts.double() / (self.k * cols.shape[1])
            else:
                covered = torch.zeros(len(rows), self.real.shape[0], dtype=torch.long).index_add_(
                    1, pair_real, held.long()
                )
                scores = ((covered > 0) & (position >= 0)).sum(1).double() / rows.shape[1]
            values[start : start + len(rows)] = scores.numpy()
            for r in torch.nonzero(position[:, 0] == _UNRANKED).flatten().tolist():
                # repeated rows or a short shortlist: rank the subset's own distances
                inside = cross[rows[r]][:, cols[r]] <= self._subset_radii(rows[r])[:, None]
                values[start + r] = self._score(inside, cols.shape[1])
        return values

    def _candidate_pairs(self, fake_features: object, fake: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The N×M distances and (real i, fake j, level) of every pair some subset's ball could hold: level is the first
        shortlist position p with ``near_distances[i, p] >= d(i, j)``, so fake j lies in i's ball of
        radius ``near_distances[i, p]`` iff level <= p; pairs beyond the shortlist never do."""
        cross = self._distances_to(fake_features, fake)
        if self._pairs is None or self._pairs[0] is not fake_features:
            level = torch.searchsorted(self._near_distances, cross)
            pair_real, pair_fake = torch.nonzero(level < self._near_distances.shape[1], as_tuple=True)
            self._pairs = (fake_features, pair_real, pair_fake, level[pair_real, pair_fake])
        return (cross, *self._pairs[1:])

    def _distances_to(self, fake_features: object, fake: Tensor) -> Tensor:
        """The N×M real-to-fake distances, kept for the last fake set (a set's value and its
        resamples read the same matrix)."""
        if self._to_fakes is None or self._to_fakes[0] is not fake_features:
            self._to_fakes = (fake_features, torch.cdist(self.real, fake))
        return self._to_fakes[1]

    def _ranked_positions(self, real_index: np.ndarray) -> Tensor:
        """:meth:`_shortlist_positions` of every resample (R×N, the narrowest integer type that
        holds them), kept for the engines that share these reference terms and passed through
        :attr:`real_side` (they depend on the reference and the resampled rows only)."""
        index = np.ascontiguousarray(real_index)
        key = hashlib.sha1(index.tobytes() + str(index.shape).encode()).digest()
        if key not in self._ranked:
            self._ranked[key] = self.real_side("knn_positions", index, lambda: self._rank_resamples(index))
        return self._ranked[key]

    def _rank_resamples(self, index: np.ndarray) -> Tensor:
        # positions run from _UNRANKED to the shortlist's length
        narrow = next(t for t in (torch.int8, torch.int16, torch.int32) if torch.iinfo(t).max >= self._near.shape[1])
        block = max(1, _BLOCK_ENTRIES // self._near.numel())
        rows = [torch.from_numpy(index[start : start + block]) for start in range(0, len(index), block)]
        return torch.cat([self._shortlist_positions(part).to(narrow) for part in rows])

    def _shortlist_positions(self, rows: Tensor) -> Tensor:
        """For a block of subsets (B×m row indices): per subset and real row (B×N), the shortlist
        position of the row's radius within the subset, −1 for rows outside it, and a whole row
        of :data:`_UNRANKED` where the shortlist cannot rank the subset (repeated rows, or a row
        with fewer than k subset members in its shortlist)."""
        count = torch.zeros(len(rows), self.real.shape[0], dtype=torch.long).scatter_add_(
            1, rows, torch.ones_like(rows)
        )
        member = count > 0
        # the first 4k + 4 candidates rank nearly every row (a half-sample keeps each with probability ½);
        # the few rows they do not are ranked over the whole shortlist
        prefix = min(self._near.shape[1], 4 * self.k + 4)
        position = _first_reaching(member[:, self._near[:, :prefix]], self.k)
        block, row = torch.nonzero(member & (position == prefix), as_tuple=True)
        if prefix < self._near.shape[1] and len(block):
            position[block, row] = _first_reaching(member[block[:, None], self._near[row]], self.k)
        unranked = (count > 1).any(1) | (member & (position == self._near.shape[1])).any(1)
        position[~member] = -1
        position[unranked] = _UNRANKED
        return position

    def _subset_radii(self, rows: Tensor) -> Tensor:
        """NND_k of every row of the subset ``rows`` among the subset's other rows (repeats
        included: a copy is a neighbour at distance 0)."""
        if self._distances is None:
            self._distances = torch.cdist(self.real, self.real)
        return self._distances[rows][:, rows].topk(self.k + 1, dim=1, largest=False).values[:, self.k]


def _first_reaching(hits: Tensor, k: int) -> Tensor:
    """Per row of ``hits`` (boolean, last dimension of length S), the first position where the
    running count of hits reaches k, or S where it never does."""
    counter = torch.uint8 if hits.shape[-1] < 256 else torch.int32
    return (hits.cumsum(dim=-1, dtype=counter) < k).sum(dim=-1, dtype=torch.long)  # the count never falls


def knn_engine(statistic: object) -> partial[KnnSets] | None:
    """The :class:`KnnSets` engine of :func:`density` or :func:`coverage` (with k = 5), else None."""
    if statistic is density:
        return partial(KnnSets, statistic="density")
    return partial(KnnSets, statistic="coverage") if statistic is coverage else None
