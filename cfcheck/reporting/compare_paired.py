"""The paired tests of two methods on one score: McNemar's exact test, a paired bootstrap, and
Holm's correction of a family of them.

No well-kept library covers these as used here: McNemar's exact test is a two-sided binomial test
on the discordant pairs (checked against :func:`scipy.stats.binomtest` in the tests), and the
paired bootstrap needs a p-value beyond its own resolution (a normal tail with the bootstrap
standard error) so that Holm's correction over many tests stays meaningful.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mcnemar_exact", "paired_bootstrap", "holm"]


def mcnemar_exact(first: np.ndarray, second: np.ndarray) -> float:
    """McNemar's exact test of paired 0/1 outcomes (two-sided binomial test on discordant pairs).

    Args:
        first: 0/1 outcomes of one method.
        second: 0/1 outcomes of the other, on the same inputs in the same order.

    Returns:
        The two-sided p-value, ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``
        where ``b`` and ``c`` count the two kinds of discordant pairs; 1 when there are none.
    """
    b = int(np.sum((first == 1) & (second == 0)))
    c = int(np.sum((first == 0) & (second == 1)))
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def paired_bootstrap(
    diffs: np.ndarray, *, resamples: int = 2000, seed: int | list[int] = 0
) -> tuple[float, float, float, float]:
    """Paired bootstrap of the mean of per-input differences.

    Args:
        diffs: ``first - second`` per shared input.
        resamples: number of bootstrap resamples.
        seed: seed of the resampling (same seed, same resamples).

    Returns:
        ``(mean, ci_low, ci_high, p_value)``: the observed mean difference, the percentile 95% CI
        of the resampled means (order statistics ``floor(0.025 B)`` in from either end), and the
        two-sided p-value of "mean difference is 0" from the
        resampled means shifted to mean zero, ``(1 + #{|mean* - mean| >= |mean|}) / (B + 1)``.
        When no resample reaches the observed difference that count only bounds the p-value by
        ``1 / (B + 1)``, which Holm's correction over many tests would inflate past any level;
        the p-value is then the normal tail ``erfc(|mean| / (SE* sqrt 2))`` with the bootstrap
        standard error ``SE*`` (0 when every difference is the same non-zero number).
    """
    diffs = np.asarray(diffs, dtype=float)
    if diffs.size == 0:
        raise ValueError("a paired bootstrap needs at least one shared input")
    observed = float(diffs.mean())
    index = np.random.default_rng(seed).integers(0, diffs.size, size=(resamples, diffs.size))
    means = diffs[index].mean(axis=1)
    ordered = np.sort(means)  # order statistics, symmetric in the sign of the differences
    tail = int(0.025 * resamples)
    low, high = ordered[tail], ordered[resamples - 1 - tail]
    reached = int(np.sum(np.abs(means - observed) >= abs(observed) - 1e-12 * max(1.0, abs(observed))))
    if reached:
        return observed, float(low), float(high), (1 + reached) / (resamples + 1)
    spread = float(means.std())  # beyond the resolution 1/(B+1): normal tail with the bootstrap SE
    p_value = 0.0 if spread == 0.0 else math.erfc(abs(observed) / (spread * math.sqrt(2.0)))
    return observed, float(low), float(high), p_value


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment.

    Args:
        p_values: raw p-values of one family of comparisons.

    Returns:
        Adjusted p-values in the same order (monotone in the sorted order, capped at 1).
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
