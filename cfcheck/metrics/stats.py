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
  :func:`crossed_bootstrap_ci` resamples the draws and the inputs, so the interval covers the
  grand mean over both populations, not only over inputs for the draws that happened to be made.
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

import numpy as np
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int, check_real, describe

__all__ = ["Summary", "VERDICTS", "bootstrap_ci", "crossed_bootstrap_ci", "summarize", "verdict",
           "wilson_interval"]

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
            stats[rows] = statistic(samples, axis=1)
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


#: second entropy word of the draws' random stream in :func:`crossed_bootstrap_ci` (its inputs'
#: stream is ``default_rng(seed)``, as in :func:`bootstrap_ci`)
_DRAW_STREAM = 7919


def crossed_bootstrap_ci(
    values: Tensor | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the grand mean of a draws × inputs table whose every row
    scores the same inputs (a crossed, paired design), resampling both factors.

    Each resample draws R rows (draws) and N columns (inputs) with replacement, independently,
    and takes the mean of the R×N cells they pick; one input resample serves all draws, which
    keeps the pairing. This is Owen's (2007) pigeonhole bootstrap for crossed random effects
    y = μ + a_draw + b_input + e: its variance is about σ_a²/R + σ_b²/N + 2σ_e²/(RN), i.e.
    conservative by one σ_e²/(RN) term, while resampling inputs alone misses σ_a²/R (the
    interval then treats the draws made as the only ones there are) and resampling draws
    alone misses σ_b²/N. Resampling R draws gives their means the plug-in variance, (R − 1)/R
    of the unbiased one, which matters at the few draws a run affords: each input's mean over
    the resampled draws is moved from its mean over all draws by √(R/(R − 1)) times the
    resampled difference. In simulations with a draw effect as large as the input noise of
    the mean, 5 draws then cover μ in about 92% of experiments at a nominal 95% (88% without
    the factor; ``tests/metrics/test_crossed_bootstrap.py``), 3 draws in about 87%.
    With one row it is :func:`bootstrap_ci` of that row (same seed, same resamples).

    Args:
        values: R×N finite values (R draws ≥ 1, N inputs ≥ 1), a tensor or an array.
        confidence: two-sided level in (0, 1).
        n_resamples: number of bootstrap resamples, ≥ 1.
        seed: int ≥ 0; the inputs' resamples come from ``default_rng(seed)`` as in
            :func:`bootstrap_ci`, the draws' from an independent stream.

    Returns:
        ``(low, high)``; ``(v, v)`` for a single cell.

    Example:
        >>> table = np.array([[0.20, 0.30, 0.25], [0.40, 0.50, 0.45]])
        >>> low, high = crossed_bootstrap_ci(table, n_resamples=2000)
        >>> bool(low < table.mean() < high), bool(high - low > 0.15)
        (True, True)
    """
    table = _as_table(values)
    level = _check_confidence(confidence)
    resamples = check_positive_int("n_resamples", n_resamples)
    start = check_positive_int("seed", seed, minimum=0)
    if table.size == 1:
        value = float(table[0, 0])
        return value, value
    draws, inputs = table.shape
    input_rng = np.random.default_rng(start)
    draw_rng = np.random.default_rng([start, _DRAW_STREAM])
    centre = table.mean(axis=0)  # each input's mean over all draws
    scale = float(np.sqrt(draws / (draws - 1))) if draws > 1 else 1.0
    stats = np.empty(resamples, dtype=np.float64)
    for rows, index in _index_blocks(input_rng, inputs, resamples):
        picked = draw_rng.integers(0, draws, size=(rows.stop - rows.start, draws))
        counts = np.zeros((len(picked), draws))
        np.add.at(counts, (np.arange(len(picked))[:, None], picked), 1.0)
        per_input = centre + scale * (counts @ table / draws - centre)  # over the resampled draws
        stats[rows] = np.take_along_axis(per_input, index, axis=1).mean(axis=1)
    return _percentile_interval(stats, level)


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
    low, high = bootstrap_ci(
        array, statistic=statistic, confidence=confidence, n_resamples=n_resamples, seed=seed
    )
    return Summary(value=float(statistic(array)), ci_low=low, ci_high=high, n=int(array.size))
