"""A paired permutation test of two methods on a set-level realism score (FID, KID, density, coverage).

A set-level score has one value per run and task, so it has no per-input differences to test. What
the two runs share is their inputs: on the same task, input *i* has a counterfactual from each
method. When both runs kept their counterfactuals' embedding features
(:mod:`cfcheck.core.set_features`), the test is:

* **data**: the inputs both methods produced a counterfactual for (matched on the ``input``
  position, never on the row), with their target classes, which must agree;
* **statistic**: ``T = S(R, A) − S(R, B)``, the score ``S`` of method A's set minus that of method B's,
  both against the same real reference ``R`` (the first run's kept reference), class-conditionally
  for ``*_target``, ``scm_fid`` and ``scm_kid`` (per kept class with at least two shared inputs,
  weighted by its share of them) and against a class-matched reference for ``*_domain``, as the
  suites score a set;
* **null**: each input's two counterfactuals are exchangeable between the methods. Under it,
  swapping A's and B's counterfactual of any input leaves the distribution of ``T`` unchanged, so
  :func:`scipy.stats.permutation_test` with ``permutation_type="samples"`` (a random swap per
  input, ``resamples`` times) draws the null distribution of ``T``. The null is symmetric about
  0 (swapping every input turns ``T`` into ``−T``); the p-value is its two-sided normal tail,
  ``2 Φ(−|T| / sd)`` with the permutation standard deviation, as the paired bootstrap of
  :mod:`.compare_paired` does, so that a p-value below the permutations' own resolution
  (``1 / (resamples + 1)``) stays usable under Holm's correction. The tests check that it
  holds its level on pairs of equal methods.

The statistic is computed on the shared inputs only, so ``T`` is not the difference of the two
published values when a method abstained on some inputs; the reported difference is ``T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.stats

from cfcheck.core.set_features import SetFeatures

__all__ = ["SetTest", "is_set_level", "paired_set_test", "set_statistic_of"]

#: set-level statistics by the first part of their metric key (``fid_target`` → ``fid``; ``scm_fid`` → ``fid``)
_NAMES = ("fid", "kid", "density", "coverage")
#: a class enters a class-conditional score with at least this many shared inputs (the suites' minimum)
MIN_PER_CLASS = 2


@dataclass(frozen=True)
class SetTest:
    """The permutation test of one set-level score: ``difference`` is ``T`` (first − second)."""

    n_shared: int
    difference: float
    p_value: float
    p_permutation: float


def set_statistic_of(metric: str) -> tuple[str, bool] | None:
    """``(statistic name, class-conditional)`` of a set-level metric key, None for any other.

    ``*_target`` is scored per target class, ``*_domain`` against the whole class-matched set;
    ``scm_fid`` and ``scm_kid`` per value of the domain's categorical parent (the kept classes; a
    domain without one keeps a single class, where both ways agree).

    Example:
        >>> set_statistic_of("fid_target"), set_statistic_of("kid_domain"), set_statistic_of("scm_kid")
        (('fid', True), ('kid', False), ('kid', True))
    """
    key = metric.split(":", 1)[0]
    base, _, scope = key.removeprefix("scm_").partition("_")
    if base not in _NAMES or scope not in (("",) if key.startswith("scm_") else ("target", "domain")):
        return None
    return base, scope != "domain"


def is_set_level(metric: str) -> bool:
    """Whether ``metric`` is one of the set-level realism scores."""
    return set_statistic_of(metric) is not None


def paired_set_test(
    metric: str, first: SetFeatures, second: SetFeatures, *, resamples: int = 2000, seed: int | list[int] = 0
) -> SetTest:
    """The paired permutation test of ``metric`` between two runs' kept sets.

    Args:
        metric: a set-level metric key (:func:`set_statistic_of`).
        first, second: the two runs' kept features of the same task.
        resamples: random swap patterns drawn (every pattern when there are fewer).
        seed: seeds the swaps.

    Returns:
        The :class:`SetTest`.

    Raises:
        ValueError: when the metric is not set-level, the runs share fewer than two inputs, a shared
            input has different target classes in the two runs, or the reference cannot score them.
    """
    parsed = set_statistic_of(metric)
    if parsed is None:
        raise ValueError(f"{metric!r} is not a set-level score ({', '.join(_NAMES)})")
    name, conditional = parsed
    shared, ia, ib = np.intersect1d(first.inputs, second.inputs, return_indices=True)
    if len(shared) < 2:
        raise ValueError(f"{len(shared)} shared inputs; a set test needs at least two")
    classes = first.classes[ia]
    if not np.array_equal(classes, second.classes[ib]):
        raise ValueError("the two runs give a shared input different target classes")
    a, b = first.features[ia].astype(np.float64), second.features[ib].astype(np.float64)
    score = _SetScore(name, conditional, a, b, classes, first.reference.astype(np.float64), first.reference_classes)

    def statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
        out = score(x2) - score(y2)
        return out if np.ndim(x) > 1 else out[0]

    n = len(shared)
    result = scipy.stats.permutation_test(
        (np.arange(n), np.arange(n) + n),
        statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    observed, null = float(result.statistic), np.asarray(result.null_distribution, dtype=np.float64)
    spread = float(np.sqrt(np.mean(null**2)))  # about 0: the null is symmetric
    if spread == 0.0:
        p_value = 1.0 if observed == 0.0 else 0.0
    else:
        p_value = float(min(1.0, 2.0 * scipy.stats.norm.sf(abs(observed) / spread)))
    return SetTest(n, observed, p_value, float(result.pvalue))


class _SetScore:
    """The score of the sets picked by index rows over ``[A; B]`` (index i: A's row i, n + i: B's)."""

    def __init__(
        self,
        name: str,
        conditional: bool,
        a: np.ndarray,
        b: np.ndarray,
        classes: np.ndarray,
        reference: np.ndarray,
        reference_classes: np.ndarray,
    ) -> None:
        import torch

        from cfcheck.metrics.manifold import DEFAULT_K, KnnSets
        from cfcheck.metrics.set_statistics import FidSets, KidSets

        def engine(real: np.ndarray) -> object:
            tensor = torch.from_numpy(real)
            if name in ("density", "coverage"):
                if len(real) <= DEFAULT_K:
                    raise ValueError(f"{len(real)} reference rows; {name} needs more than k = {DEFAULT_K}")
                return KnnSets(tensor, name)
            if len(real) < 2:
                raise ValueError(f"{len(real)} reference rows; {name} needs at least two")
            return (FidSets if name == "fid" else KidSets)(tensor)

        n = len(classes)
        labels, counts = np.unique(classes, return_counts=True)
        if conditional:
            groups = [
                (np.flatnonzero(classes == c), reference[reference_classes == c])
                for c, k in zip(labels, counts)
                if k >= MIN_PER_CLASS
            ]
            if not groups:
                raise ValueError(f"no target class has {MIN_PER_CLASS} shared inputs")
        else:  # one reference with the shared inputs' class mix
            held = {c: int(np.sum(reference_classes == c)) for c in labels}
            per = min(held[c] // k for c, k in zip(labels, counts))
            if per < 1:
                raise ValueError("the kept reference lacks a class of the shared inputs")
            real = np.concatenate([reference[reference_classes == c][: per * k] for c, k in zip(labels, counts)])
            groups = [(np.arange(n), real)]
        total = sum(len(rows) for rows, _ in groups)
        self.parts = []
        for rows, real in groups:
            local = np.full(2 * n, -1, dtype=np.int64)
            local[rows], local[rows + n] = np.arange(len(rows)), np.arange(len(rows)) + len(rows)
            fakes = torch.from_numpy(np.concatenate([a[rows], b[rows]]))
            self.parts.append((len(rows) / total, engine(real), fakes, rows, local, len(real)))

    def __call__(self, index: np.ndarray) -> np.ndarray:
        total = np.zeros(len(index))
        for weight, engine, fakes, rows, local, m in self.parts:
            real_index = np.tile(np.arange(m), (len(index), 1))
            total += weight * engine.resampled(fakes, real_index, local[index[:, rows]])  # type: ignore[attr-defined]
        return total
