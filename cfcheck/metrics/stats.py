"""Uncertainty of scores: percentile bootstrap confidence intervals.

Every score in a scorecard is reported with n and a 95% CI. Per-image metrics resample
images; set-level metrics such as FID resample the rows of both sets (the counterfactuals
and the reference images) independently, which is what :func:`bootstrap_set_ci` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int, check_real, describe

__all__ = ["Summary", "bootstrap_ci", "bootstrap_set_ci", "summarize"]

Statistic = Callable[[np.ndarray], float]
SetStatistic = Callable[..., float]

# Statistics whose numpy implementation accepts ``axis``: resamples are evaluated in
# blocks instead of one Python call each.
_VECTORISED: tuple[Callable, ...] = (np.mean, np.median)
_BLOCK_ELEMENTS = 2_000_000  # bounds the memory of a block of resampled values


def _as_values(values: object) -> np.ndarray:
    if isinstance(values, Tensor):
        array = values.detach().cpu().double().numpy()
    elif isinstance(values, np.ndarray):
        array = values.astype(np.float64)
    else:
        raise TypeError(f"`values` must be a torch.Tensor or numpy.ndarray, got {describe(values)}")
    if array.ndim != 1:
        raise ValueError(f"`values` must be 1-D (one value per sample), got shape {array.shape}")
    if array.size == 0:
        raise ValueError("`values` is empty; a confidence interval needs at least one sample")
    if not np.isfinite(array).all():
        raise ValueError(
            "`values` contains NaN or infinite entries; drop abstentions first and report coverage separately"
        )
    return array


def _check_confidence(confidence: object) -> float:
    level = check_real("confidence", confidence)
    if not 0.0 < level < 1.0:
        raise ValueError(f"`confidence` must lie strictly between 0 and 1, got {level}")
    return level


def _percentile_interval(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    if not np.isfinite(stats).all():
        raise ValueError("the statistic returned NaN or infinite values on some bootstrap resamples")
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(stats, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_ci(
    values: Tensor | np.ndarray,
    *,
    statistic: Statistic = np.mean,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic(values)`` from resampling values with replacement.

    Deterministic for a given ``seed``; a single value gives the degenerate interval (v, v).
    """
    array = _as_values(values)
    level = _check_confidence(confidence)
    resamples = check_positive_int("n_resamples", n_resamples)
    rng = np.random.default_rng(check_positive_int("seed", seed, minimum=0))
    if array.size == 1:
        value = float(statistic(array))
        return value, value
    n = array.size
    stats = np.empty(resamples, dtype=np.float64)
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        samples = array[rng.integers(0, n, size=(stop - start, n))]
        if statistic in _VECTORISED:
            stats[start:stop] = statistic(samples, axis=1)
        else:
            stats[start:stop] = [float(statistic(row)) for row in samples]
    return _percentile_interval(stats, level)


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


def bootstrap_set_ci(
    a: Tensor | np.ndarray,
    b: Tensor | np.ndarray,
    statistic: SetStatistic,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    point: float | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of a two-sample set statistic such as ``fid(a, b)``.

    Rows of ``a`` and of ``b`` are resampled with replacement, independently, and the
    statistic is recomputed on each pair of resampled sets. Resampling duplicates rows,
    which biases FID upward, so the plain interval can miss the full-set value. Given the
    full-set value as ``point``, the interval is shifted by the bootstrap bias
    (median of the resampled statistics − ``point``) and so is centred on it.
    """
    if not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {describe(statistic)}")
    n_a, n_b = _rows("a", a), _rows("b", b)
    level = _check_confidence(confidence)
    resamples = check_positive_int("n_resamples", n_resamples)
    rng = np.random.default_rng(check_positive_int("seed", seed, minimum=0))
    stats = np.empty(resamples, dtype=np.float64)
    for i in range(resamples):
        a_sub = _take(a, rng.integers(0, n_a, size=n_a))
        b_sub = _take(b, rng.integers(0, n_b, size=n_b))
        stats[i] = float(statistic(a_sub, b_sub))
    low, high = _percentile_interval(stats, level)
    if point is not None:
        bias = float(np.median(stats)) - check_real("point", point)
        low, high = low - bias, high - bias
    return low, high


@dataclass(frozen=True)
class Summary:
    """A score as the scorecard reports it: point value, CI bounds and sample size."""

    value: float
    ci_low: float
    ci_high: float
    n: int


def summarize(
    values: Tensor | np.ndarray,
    *,
    statistic: Statistic = np.mean,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> Summary:
    """Point estimate ``statistic(values)`` with its percentile bootstrap CI and n."""
    array = _as_values(values)
    low, high = bootstrap_ci(
        array, statistic=statistic, confidence=confidence, n_resamples=n_resamples, seed=seed
    )
    return Summary(value=float(statistic(array)), ci_low=low, ci_high=high, n=int(array.size))
