"""Intervals of set-level statistics (FID, KID, k-NN density and coverage): :func:`bootstrap_set_ci`.

The null correction of its half-sampling for FID (``method="null_corrected_half_sampling"``):

A two-sample statistic T of sizes (m_a, m_b) splits, as a U-statistic does (Hoeffding), into a
linear part, whose variance V₁ shrinks like 1/m, and a degenerate part, whose variance V₂ shrinks
like 1/m² and which is all that is left where the two sets share a distribution (FID's
‖μ_A − μ_B‖² between two samples of one distribution is the square of a sampling error). Its
sampling variance is V₁ + V₂. A half-sample of each set (:func:`bootstrap_set_ci`'s
half-samplings) varies around the whole sets by V₁ · (2 − 1) + V₂ · (4 − 1) = V₁ + 3 V₂: right
for a mean-like statistic, three times too much for the degenerate part. The bootstrap does the
same (its resamples differ by the sample's own error as well as the resampling's).

The degenerate part's variance is that of T where the sets differ in nothing but sampling: T over
random splits of the two sets pooled, per stratum, after moving the second set's stratum mean onto
the first's (a permutation null, :func:`null_strata` and :func:`draw_splits`). Then
V₁ + V₂ = V_half − 2 V_null, and :func:`null_correction` returns the factor √((V_half − 2 V_null) /
V_half) by which to scale the half-samples' deviations, never below √(V_null / V_half) (the
sampling variance is at least the degenerate part's). Where the sets' covariances differ, the
pooled null mixes them: exact for the degenerate part when they are equal, and too large when the
smaller set (the counterfactuals) is the less varied one, which makes the interval too narrow.
``benchmarks/fid_intervals.py`` measures it at the quick profile's sizes (120 counterfactuals,
8 reference images each): 1.0–1.2× the spread of fresh draws and 39–40 of 40 covered where the
sets share a distribution or differ in mean, but 32 of 40 (0.82×) for fid_domain with the
counterfactuals' features × 0.77. So the suites keep the bias-shifted bootstrap for FID; this
method is there for that comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int, check_real, describe
from cfcheck.metrics.stats import _check_confidence, _percentile_interval

__all__ = ["SET_CI_METHODS", "bootstrap_set_ci", "draw_splits", "null_correction", "null_strata"]

SetStatistic = Callable[..., float]
BatchedSetStatistic = Callable[[tuple[np.ndarray, ...], tuple[np.ndarray, ...]], np.ndarray]

_SET_BLOCK = 256  # resamples per call of a batched set statistic (bounds its count matrices; the suites' 200
# in one call, so a set engine passes over each kernel or outer-product matrix once)


def null_strata(
    parts_a: Sequence[Tensor | np.ndarray], parts_b: Sequence[Tensor | np.ndarray]
) -> tuple[Tensor | np.ndarray, ...]:
    """Per stratum, the rows of a followed by the rows of b moved by (mean of a − mean of b), so
    the two share a mean and differ only in spread and shape."""
    if len(parts_a) != len(parts_b):
        raise ValueError(f"`a` and `b` need the same number of strata, got {len(parts_a)} and {len(parts_b)}")
    pooled: list[Tensor | np.ndarray] = []
    for a, b in zip(parts_a, parts_b):
        if isinstance(a, Tensor) != isinstance(b, Tensor):
            raise TypeError("each stratum of `a` and `b` must both be torch tensors or both numpy arrays")
        moved = b - b.mean(0) + a.mean(0)
        # b is a tensor where a is one (checked above)
        pooled.append(torch.cat([a, cast(Tensor, moved)]) if isinstance(a, Tensor) else np.concatenate([a, moved]))
    return tuple(pooled)


def draw_splits(
    sizes: Sequence[tuple[int, int]], resamples: int, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Row indices into each pooled stratum of :func:`null_strata` for ``resamples`` random splits:
    per stratum of sizes (m_a, m_b), an R×m_a matrix for the first set and R×m_b for the second
    (together a permutation of the stratum's m_a + m_b rows)."""
    first, second = [], []
    for size_a, size_b in sizes:
        order = rng.permuted(np.broadcast_to(np.arange(size_a + size_b), (resamples, size_a + size_b)), axis=1)
        first.append(order[:, :size_a])
        second.append(order[:, size_a:])
    return first, second


def null_correction(half: np.ndarray, null: np.ndarray) -> float:
    """√(max(V_half − 2 V_null, V_null) / V_half) from the half-samples' statistics and the null
    splits' (the module docstring says why); 1 where the half-samples do not vary."""
    v_half = float(np.var(half, ddof=1)) if len(half) > 1 else 0.0
    v_null = float(np.var(null, ddof=1)) if len(null) > 1 else 0.0
    if v_half <= 0.0:
        return 1.0
    return float(np.sqrt(max(v_half - 2.0 * v_null, v_null) / v_half))


def _rows(name: str, data: object) -> int:
    if not isinstance(data, (Tensor, np.ndarray)):
        raise TypeError(f"`{name}` must be a torch.Tensor or numpy.ndarray, got {describe(data)}")
    if data.ndim < 1 or data.shape[0] < 1:
        raise ValueError(f"`{name}` needs at least one row, got shape {tuple(data.shape)}")
    return int(data.shape[0])


def _take(data: Tensor | np.ndarray, index: np.ndarray) -> Tensor | np.ndarray:
    if isinstance(data, Tensor):
        return data[torch.from_numpy(index).to(data.device)]
    return data[index]


def _strata(name: str, data: object) -> tuple[Tensor | np.ndarray, ...]:
    parts = tuple(data) if isinstance(data, (tuple, list)) else (data,)
    if not parts:
        raise ValueError(f"`{name}` must hold at least one stratum")
    for i, part in enumerate(parts):
        _rows(f"{name}[{i}]" if len(parts) > 1 else name, part)
    return parts


def _draw_set_resamples(
    parts_a: tuple[Tensor | np.ndarray, ...],
    parts_b: tuple[Tensor | np.ndarray, ...],
    resamples: int,
    rng: np.random.Generator,
    method: str,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Row indices of every resample, per stratum (R×m each), each stratum's R resamples drawn
    at once: with replacement (``"bootstrap"``, m = its size) or, for the half-samplings, the
    first m = max(2, size // 2) rows of an independent permutation per resample."""

    def draw(part: Tensor | np.ndarray) -> np.ndarray:
        size = len(part)
        if method != "bootstrap":  # half_sampling, centred_half_sampling
            keep = min(size, max(2, size // 2))
            return rng.permuted(np.broadcast_to(np.arange(size), (resamples, size)), axis=1)[:, :keep]
        return rng.integers(0, size, size=(resamples, size))

    return [draw(p) for p in parts_a], [draw(p) for p in parts_b]


#: The resampling schemes of :func:`bootstrap_set_ci`.
SET_CI_METHODS = ("bootstrap", "half_sampling", "centred_half_sampling", "null_corrected_half_sampling")


def _evaluate_resamples(
    parts_a: tuple[Tensor | np.ndarray, ...],
    parts_b: tuple[Tensor | np.ndarray, ...],
    statistic: SetStatistic,
    stratified: bool,
    resampled: BatchedSetStatistic | None,
    indices_a: list[np.ndarray],
    indices_b: list[np.ndarray],
) -> np.ndarray:
    """The statistic of every resample (row r of each stratum's index matrix), batched when it can be."""
    resamples = indices_a[0].shape[0]
    stats = np.empty(resamples, dtype=np.float64)
    if resampled is not None:
        for start in range(0, resamples, _SET_BLOCK):
            block = slice(start, start + _SET_BLOCK)
            values = resampled(tuple(i[block] for i in indices_a), tuple(i[block] for i in indices_b))
            stats[block] = np.asarray(values, dtype=np.float64)
        return stats
    for r in range(resamples):
        a_sub = tuple(_take(p, i[r]) for p, i in zip(parts_a, indices_a))
        b_sub = tuple(_take(p, i[r]) for p, i in zip(parts_b, indices_b))
        stats[r] = float(statistic(a_sub, b_sub) if stratified else statistic(a_sub[0], b_sub[0]))
    return stats


def bootstrap_set_ci(
    a: Tensor | np.ndarray | Sequence[Tensor | np.ndarray],
    b: Tensor | np.ndarray | Sequence[Tensor | np.ndarray],
    statistic: SetStatistic,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    point: float | None = None,
    method: str = "bootstrap",
    resampled: BatchedSetStatistic | None = None,
    null_resampled: BatchedSetStatistic | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of a two-sample set statistic such as ``fid(a, b)``.

    Rows of ``a`` and of ``b`` are resampled with replacement, independently, and the
    statistic is recomputed on each pair of resampled sets. ``a`` and ``b`` may also be
    tuples of strata (e.g. one block per class): each block is resampled within itself, so
    the class counts stay fixed, and ``statistic`` receives the tuples. Resampling duplicates
    rows, which biases FID upward, so the plain interval can miss the full-set value. Given
    the full-set value as ``point``, the interval is shifted by the bootstrap bias (median of
    the resampled statistics − ``point``) and so is centred on it.

    ``method="half_sampling"`` (needs ``point``) is for kernel statistics such as KID, whose
    unbiased estimator counts a duplicated row as a perfect match, so bootstrap resamples are
    biased and wildly spread: each resample takes b = ⌊m/2⌋ rows of every block of m without
    replacement, and the interval is ``point − c · q`` for the quantiles q of (resampled −
    point), with c = √(b/(m − b)) (1 for even blocks; pooled over the blocks). A half-sample
    varies around the whole sample by (1/b − 1/m)σ² = σ²/m for a mean-like (√m-consistent)
    statistic, i.e. as much as the whole-sample statistic varies between samples: the
    classic half-sampling variance (McCarthy 1969), which keeps c = 1. (Subsampling's √(b/m)
    (Politis & Romano 1994) assumes b ≪ m; at b = m/2 it halves the variance: for KID against
    sets whose covariance differs from the reference's, that interval was 0.72× as wide as the
    spread of fresh draws, which ``tests/metrics/test_realism_intervals.py`` rejects, and covered
    26 of 30 simulated runs at 100 per class.) Where both sets share a distribution, KID is
    degenerate (fluctuations of order 1/m) and the interval is conservative (about 1.7× wide).

    ``resampled`` (optional) computes the statistic of many resamples at once: it receives,
    per stratum of ``a`` and of ``b``, an R×m matrix of row indices (one resample per row)
    and returns the R values ``statistic`` would give on the gathered rows (e.g.
    :meth:`cfcheck.metrics.set_statistics.KidSets.resampled`). The resamples are the same either way.

    ``method="centred_half_sampling"`` draws the same half-samples but takes the deviations q
    from the half-samples' median instead of ``point``: for statistics whose expectation moves
    with the set sizes, such as k-nearest-neighbour density and coverage (a half-set of real
    images has wider neighbourhood balls), so the half-samples are biased and an interval
    reflected about ``point`` would miss it (``tests/metrics/test_realism_intervals.py``).

    ``method="null_corrected_half_sampling"`` is the centred half-sampling with its scale
    multiplied by :func:`null_correction`: half-samples overstate a degenerate statistic's
    variance threefold, and that share is measured by the statistic over random splits of each
    stratum's two sets pooled (the second set moved onto the first's mean). ``null_resampled`` is
    ``resampled`` for those splits: the same call on the pooled strata (row indices into each
    pooled stratum for the first set, then for the second). It is narrower than the bootstrap for
    FID but too narrow where the counterfactuals are less varied than the reference (the module
    docstring gives the figures), so FID keeps ``"bootstrap"``.
    """
    if method not in SET_CI_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, SET_CI_METHODS))}, got {method!r}")
    half = method != "bootstrap"
    if half and point is None:
        raise ValueError(f"{method} needs the full-set value as `point`")
    if not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {describe(statistic)}")
    stratified = isinstance(a, (tuple, list))
    parts_a, parts_b = _strata("a", a), _strata("b", b)
    level = _check_confidence(confidence)
    resamples = check_positive_int("n_resamples", n_resamples)
    rng = np.random.default_rng(check_positive_int("seed", seed, minimum=0))
    indices_a, indices_b = _draw_set_resamples(parts_a, parts_b, resamples, rng, method)
    stats = _evaluate_resamples(parts_a, parts_b, statistic, stratified, resampled, indices_a, indices_b)
    low, high = _percentile_interval(stats, level)
    if half:
        centre = check_real("point", point)
        kept = sum(i.shape[1] for i in (*indices_a, *indices_b))
        left = sum(len(p) for p in (*parts_a, *parts_b)) - kept
        scale = float(np.sqrt(kept / left)) if left else 1.0
        if method == "null_corrected_half_sampling":  # cfcheck.metrics.set_intervals says why
            pooled = null_strata(parts_a, parts_b)
            split_a, split_b = draw_splits([(len(p), len(q)) for p, q in zip(parts_a, parts_b)], resamples, rng)
            null = _evaluate_resamples(pooled, pooled, statistic, stratified, null_resampled, split_a, split_b)
            scale *= null_correction(stats, null)
        # centred: deviations from the half-samples' own median, for statistics whose expectation
        # depends on the set sizes (FID, k-NN density and coverage), so half-sets are biased
        middle = centre if method == "half_sampling" else float(np.median(stats))
        return centre - scale * (high - middle), centre - scale * (low - middle)
    if point is not None:
        bias = float(np.median(stats)) - check_real("point", point)
        low, high = low - bias, high - bias
    return low, high
