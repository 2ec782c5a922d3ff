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
- **Set-level scores** (FID, KID): :func:`bootstrap_set_ci` resamples the counterfactual set
  and the reference set independently; it estimates the variability of the statistic from
  both finite samples, shifted by the bootstrap bias so it is centred on the full-set value.
  It does not include the finite-sample bias of FID itself — that is what the real-vs-real
  floor at the same n and class mix is for.

:func:`verdict` turns (interval, bar) into pass / fail / inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_positive_int, check_real, describe

__all__ = ["Summary", "VERDICTS", "bootstrap_ci", "bootstrap_set_ci", "crossed_bootstrap_ci", "summarize", "verdict",
           "wilson_interval"]

Statistic = Callable[[np.ndarray], float]
SetStatistic = Callable[..., float]
BatchedSetStatistic = Callable[[tuple[np.ndarray, ...], tuple[np.ndarray, ...]], np.ndarray]

# Statistics whose numpy implementation accepts ``axis``: resamples are evaluated in
# blocks instead of one Python call each.
_VECTORISED: tuple[Callable, ...] = (np.mean, np.median)
_BLOCK_ELEMENTS = 2_000_000  # bounds the memory of a block of resampled values
_SET_BLOCK = 256  # resamples per call of a batched set statistic (bounds its count matrices; the suites' 200
# in one call, so a set engine passes over each kernel or outer-product matrix once)


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
    parts_a: tuple[Tensor | np.ndarray, ...], parts_b: tuple[Tensor | np.ndarray, ...], resamples: int,
    rng: np.random.Generator, method: str,
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
SET_CI_METHODS = ("bootstrap", "half_sampling", "centred_half_sampling")


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
    """
    if method not in SET_CI_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, SET_CI_METHODS))}, got {method!r}")
    half = method in ("half_sampling", "centred_half_sampling")
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
    stats = np.empty(resamples, dtype=np.float64)
    if resampled is not None:
        for start in range(0, resamples, _SET_BLOCK):
            block = slice(start, start + _SET_BLOCK)
            values = resampled(tuple(i[block] for i in indices_a), tuple(i[block] for i in indices_b))
            stats[block] = np.asarray(values, dtype=np.float64)
    else:
        for r in range(resamples):
            a_sub = tuple(_take(p, i[r]) for p, i in zip(parts_a, indices_a))
            b_sub = tuple(_take(p, i[r]) for p, i in zip(parts_b, indices_b))
            stats[r] = float(statistic(a_sub, b_sub) if stratified else statistic(a_sub[0], b_sub[0]))
    low, high = _percentile_interval(stats, level)
    if half:
        centre = check_real("point", point)
        kept = sum(i.shape[1] for i in (*indices_a, *indices_b))
        left = sum(len(p) for p in (*parts_a, *parts_b)) - kept
        scale = float(np.sqrt(kept / left)) if left else 1.0
        # centred: deviations from the half-samples' own median, for statistics whose expectation
        # depends on the set sizes (k-NN density and coverage), so half-sets are biased
        middle = float(np.median(stats)) if method == "centred_half_sampling" else centre
        return centre - scale * (high - middle), centre - scale * (low - middle)
    if point is not None:
        bias = float(np.median(stats)) - check_real("point", point)
        low, high = low - bias, high - bias
    return low, high


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials, ``n >= 1``.
        confidence: two-sided level in (0, 1).

    Returns:
        ``(low, high)`` with ``0 <= low <= successes/n <= high <= 1``.

    Example:
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
