"""Uncertainty of scores: what each interval estimates, and the three-valued verdict.

Every score in a scorecard is reported with n and a 95% CI. What the interval is about:

- **Proportions** (TA, OTA, coverage, ... — per-input indicators in {0, 1}): the Wilson score
  interval for the probability that the method succeeds on an input drawn like the task's
  inputs. Unlike a percentile bootstrap it keeps its coverage near 0 and 1 (a bootstrap of
  119 hits out of 120 prints the useless "[1, 1]"-like intervals; Wilson gives [0.954, 0.999]).
- **Other per-input means** (distances, LVS, gains): the percentile bootstrap over inputs,
  i.e. the sampling variability of the mean over the task's input distribution.
- **Means over a crossed table** (a score measured on every input under each of several random
  draws of something the method is compared against, e.g. several random networks):
  :func:`crossed_interval`, a t interval whose variance and degrees of freedom take the draws
  and the inputs from the two-way ANOVA, so it covers the grand mean over both populations, not
  only over inputs for the draws that happened to be made, and widens as few draws call for.
- **Set-level scores** (FID, KID, density, coverage):
  :func:`cfcheck.metrics.set_intervals.bootstrap_set_ci` resamples the counterfactual set
  and the reference set independently (half-samples, or a bootstrap for FID); it estimates the
  variability of the statistic from both finite samples, centred on the full-set value. It does
  not include the finite-sample bias of FID itself — that is what the real-vs-real floor at the
  same n and class mix is for.

:func:`verdict` turns (interval, bar) into pass / fail / inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, cast

import numpy as np
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int, check_real, describe

__all__ = ["Summary", "VERDICTS", "bootstrap_ci", "crossed_interval", "summarize", "verdict", "wilson_interval"]

Statistic = Callable[[np.ndarray], float]

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
    stats = np.empty(resamples, dtype=np.float64)
    for rows, index in _index_blocks(rng, array.size, resamples):
        samples = array[index]
        if statistic in _VECTORISED:
            # the statistics in _VECTORISED take numpy's axis
            stats[rows] = cast(Callable[..., Any], statistic)(samples, axis=1)
        else:
            stats[rows] = [float(statistic(row)) for row in samples]
    return _percentile_interval(stats, level)


def _index_blocks(rng: np.random.Generator, n: int, resamples: int) -> Iterator[tuple[slice, np.ndarray]]:
    """Indices of ``resamples`` resamples of n values with replacement, in blocks (rows, B×n)
    small enough to gather at once; the same stream for a seed in every caller."""
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        yield slice(start, stop), rng.integers(0, n, size=(stop - start, n))


def crossed_interval(values: Tensor | np.ndarray, *, confidence: float = 0.95) -> tuple[float, float]:
    """t interval of the grand mean of a draws × inputs table whose every row scores the same
    inputs (a crossed design: y = μ + a_draw + b_input + e), with Satterthwaite's degrees of freedom.

    The variance of the grand mean is σ_a²/R + σ_b²/N + σ_e²/(RN). From the two-way ANOVA's mean
    squares of draws (MS_A, R − 1 df) and inputs (MS_B, N − 1 df), (MS_A + MS_B)/(RN) estimates it
    with one σ_e²/(RN) to spare (conservative by that term, never negative); its degrees of freedom
    are Satterthwaite's, (MS_A + MS_B)² / (MS_A²/(R − 1) + MS_B²/(N − 1)). Where the draws dominate
    that is close to R − 1, so a few draws get the wide t quantile their few degrees of freedom
    call for, where a percentile bootstrap of the table (Owen's pigeonhole) stays narrow and
    under-covers (``tests/metrics/test_crossed_interval.py`` measures both). With one draw it is
    the t interval over inputs (it then says nothing about other draws), with one input the t
    interval over draws.

    Args:
        values: R×N finite values (R draws ≥ 1, N inputs ≥ 1), a tensor or an array.
        confidence: two-sided level in (0, 1).

    Returns:
        ``(low, high)``, symmetric about the grand mean; ``(v, v)`` for a single cell or a
        constant table.

    Example:
        >>> table = np.array([[0.20, 0.30, 0.25], [0.40, 0.50, 0.45]])
        >>> low, high = crossed_interval(table)
        >>> bool(low < table.mean() < high), bool(high - low > 0.5)
        (True, True)
    """
    from scipy.stats import t as student_t

    table = _as_table(values)
    level = _check_confidence(confidence)
    draws, inputs = table.shape
    mean = float(table.mean())
    terms = []  # (mean square, degrees of freedom) of each factor with more than one level
    if draws > 1:
        terms.append((inputs * float(((table.mean(axis=1) - mean) ** 2).sum()) / (draws - 1), draws - 1))
    if inputs > 1:
        terms.append((draws * float(((table.mean(axis=0) - mean) ** 2).sum()) / (inputs - 1), inputs - 1))
    total = sum(square for square, _ in terms)
    if total <= 0.0:
        return mean, mean
    spread = sum(square**2 / df for square, df in terms)
    # Satterthwaite's degrees of freedom; for mean squares so small that their squares underflow
    # to 0, the same ratio taken of the squares' shares of the total
    freedom = (
        total**2 / spread
        if spread >= np.finfo(float).tiny
        else 1.0 / sum((square / total) ** 2 / df for square, df in terms)
    )
    half = float(student_t.ppf(0.5 + level / 2, freedom)) * float(np.sqrt(total / (draws * inputs)))
    return mean - half, mean + half


def _as_table(values: object) -> np.ndarray:
    """``values`` as a finite R×N float64 array (R, N ≥ 1)."""
    if isinstance(values, Tensor):
        table = values.detach().cpu().double().numpy()
    elif isinstance(values, np.ndarray):
        table = values.astype(np.float64)
    else:
        raise TypeError(f"`values` must be a torch.Tensor or numpy.ndarray, got {describe(values)}")
    if table.ndim != 2 or 0 in table.shape:
        raise ValueError(f"`values` must be a non-empty 2-D table (draws × inputs), got shape {table.shape}")
    if not np.isfinite(table).all():
        raise ValueError("`values` contains NaN or infinite entries; keep the inputs every draw scored")
    return table


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials, ``n >= 1``.
        confidence: two-sided level in (0, 1).

    Returns:
        ``(low, high)`` with ``0 <= low <= successes/n <= high <= 1``.

    Examples:
        >>> [round(v, 4) for v in wilson_interval(120, 120)]
        [0.969, 1.0]
    """
    level = _check_confidence(confidence)
    trials = check_positive_int("n", n)
    hits = check_positive_int("successes", successes, minimum=0)
    if hits > trials:
        raise ValueError(f"`successes` must be <= n, got {hits} successes in {trials} trials")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p = hits / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # exact at the boundaries (the closed form loses the last ulp there)
    low = 0.0 if hits == 0 else max(0.0, float(centre - half))
    high = 1.0 if hits == trials else min(1.0, float(centre + half))
    return low, high


#: The three verdicts a bar can give, plus "error" when no score could be computed.
VERDICTS = ("pass", "fail", "inconclusive", "error")


def verdict(value: float, ci_low: float, ci_high: float, bound: float, kind: str) -> str:
    """Pass / fail / inconclusive for a score against a bar ``value >= bound`` (kind "min")
    or ``value <= bound`` (kind "max").

    The whole 95% interval on the right side of the bar passes, the whole interval on the wrong
    side fails, an interval that straddles it is inconclusive: more samples would be needed to
    tell. Without an interval (NaN bounds) the point value decides. A NaN value is an error.
    """
    if kind not in ("min", "max"):
        raise ValueError(f"`kind` must be 'min' or 'max', got {kind!r}")
    if not np.isfinite(value):
        return "error"
    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        ci_low = ci_high = value
    good_low, good_high = (ci_low >= bound, ci_high >= bound) if kind == "min" else (ci_high <= bound, ci_low <= bound)
    if good_low and good_high:
        return "pass"
    if not good_low and not good_high:
        return "fail"
    return "inconclusive"


def _is_binary(array: np.ndarray) -> bool:
    return bool(np.all((array == 0.0) | (array == 1.0)))


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
    indicators: bool | None = None,
) -> Summary:
    """Point estimate ``statistic(values)`` with its CI and n.

    The mean of {0, 1} indicators gets the Wilson interval (see the module docstring); every
    other statistic the percentile bootstrap over samples. ``indicators`` says whether the values
    are indicators (a proportion): ``None`` decides from the values, ``False`` keeps the bootstrap
    for a continuous quantity that happens to take only the values 0 and 1 (a distance of 0).
    """
    array = _as_values(values)
    if statistic is np.mean and indicators is not False and _is_binary(array):
        low, high = wilson_interval(int(array.sum()), array.size, confidence)
        return Summary(value=float(array.mean()), ci_low=low, ci_high=high, n=int(array.size))
    low, high = bootstrap_ci(array, statistic=statistic, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return Summary(value=float(statistic(array)), ci_low=low, ci_high=high, n=int(array.size))
