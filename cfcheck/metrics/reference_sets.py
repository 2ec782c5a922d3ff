"""Real reference sets and real-vs-real floors for the realism scores.

FID and KID depend on n and on the class mix, so a realism score means something only beside
the same statistic for *real* images at the same n and class mix: the floor no method can go
below. This module draws, from a split that is never scored (the domain's ``reference``
split), per class:

- a reference set of ``reference_per_sample`` × n_k real images of class k (capped by what
  the pool can spare), and
- ``floor_draws`` floor sets of exactly n_k real images of class k,

all without replacement and disjoint from one another, and scores a counterfactual set and
every floor set against the same reference, either class-conditionally (per target class,
pooled with weights n_k / n) or over the whole class-matched set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from torch import Tensor

from cfcheck.core.cache import tensor_digest
from cfcheck.metrics.manifold import KnnSets, coverage, density
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_store import stored_engine, stored_floors
from cfcheck.metrics.set_intervals import BatchedSetStatistic, bootstrap_set_ci, null_strata
from cfcheck.metrics.set_statistics import FidSets, KidSets, kid_all_pairs, set_statistic_engine

SetStatistic = Callable[[Tensor, Tensor], float]

#: The realism statistics the suites score, each with how its set-level CI resamples
#: (:func:`~cfcheck.metrics.set_intervals.bootstrap_set_ci`): KID's unbiased estimator reads a
#: duplicated row as a perfect match, and a duplicated real image is a neighbour at distance 0 that
#: shrinks the k-NN balls, so those are half-sampled; half-sets move the k-NN statistics'
#: expectation, so theirs are centred on the half-samples' median.
REALISM_STATISTICS: dict[str, tuple[SetStatistic, str]] = {
    "fid": (fid, "bootstrap"),
    "kid": (kid_all_pairs, "half_sampling"),
    "density": (density, "centred_half_sampling"),
    "coverage": (coverage, "centred_half_sampling"),
}

#: Real reference images per counterfactual (per class), before the pool's cap.
REFERENCE_PER_SAMPLE = 8
#: Independent real-vs-real floor draws; their spread is the floor's own uncertainty.
FLOOR_DRAWS = 5
#: Classes with fewer counterfactuals than this cannot have a covariance (FID) or an unbiased
#: within-set kernel mean (KID); they are left out of the class-conditional score.
MIN_PER_CLASS = 2


def minimum_pool(n_k: int, floor_draws: int = FLOOR_DRAWS) -> int:
    """Real images of a class that :func:`draw_reference` needs for ``n_k`` counterfactuals of it:
    ``floor_draws`` floor sets of n_k and a reference of at least 2·n_k, all disjoint."""
    return (floor_draws + 2) * n_k


def pool_suffices(pool_labels: Tensor, classes: Tensor, floor_draws: int = FLOOR_DRAWS) -> bool:
    """Whether a pool labelled ``pool_labels`` holds :func:`minimum_pool` real images of every
    class in ``classes`` (the counterfactuals' target classes, one per counterfactual)."""
    wanted = classes.long().bincount()
    held = pool_labels.long().bincount(minlength=len(wanted))
    return all(int(held[k]) >= minimum_pool(int(n), floor_draws) for k, n in enumerate(wanted) if n > 0)


@dataclass(frozen=True)
class ReferenceDraw:
    """Indices into the reference pool, per class: one reference set and several floor sets."""

    reference: dict[int, Tensor]
    floors: list[dict[int, Tensor]]


def draw_reference(
    pool_labels: Tensor,
    counts: dict[int, int],
    *,
    generator: torch.Generator,
    reference_per_sample: int = REFERENCE_PER_SAMPLE,
    floor_draws: int = FLOOR_DRAWS,
) -> ReferenceDraw:
    """Class-matched, disjoint draws without replacement from a labelled pool.

    Args:
        pool_labels: int64 labels of the pool (N).
        counts: class → number of counterfactuals of that target class (n_k ≥ 1).
        generator: seeded CPU generator (the draws are a function of it).
        reference_per_sample: reference images per counterfactual; capped so the floors fit.
        floor_draws: number of floor sets (each of exactly n_k images of class k).

    Returns:
        A :class:`ReferenceDraw`; per class, the reference has
        ``min(reference_per_sample·n_k, pool_k − floor_draws·n_k)`` images.

    Raises:
        ValueError: when a class's pool cannot hold the floors plus a reference of 2·n_k.
    """
    reference: dict[int, Tensor] = {}
    floors: list[dict[int, Tensor]] = [{} for _ in range(floor_draws)]
    for cls, n_k in sorted(counts.items()):
        if n_k < 1:
            raise ValueError(f"class {cls}: counts must be >= 1, got {n_k}")
        pool = torch.nonzero(pool_labels == cls).flatten()
        size = min(reference_per_sample * n_k, len(pool) - floor_draws * n_k)
        if len(pool) < minimum_pool(n_k, floor_draws):
            raise ValueError(
                f"the reference pool has {len(pool)} images of class {cls}; {n_k} counterfactuals of that class "
                f"need at least {minimum_pool(n_k, floor_draws)} (a reference of 2 per counterfactual and "
                f"{floor_draws} floor sets)"
            )
        order = pool[torch.randperm(len(pool), generator=generator)]
        reference[cls] = order[:size]
        for j in range(floor_draws):
            floors[j][cls] = order[size + j * n_k : size + (j + 1) * n_k]
    return ReferenceDraw(reference, floors)


@dataclass(frozen=True)
class RealismScore:
    value: float
    ci: tuple[float, float]
    n: int
    floors: list[float]
    classes_skipped: list[int]

    @property
    def floor_max(self) -> float:
        return max(self.floors)


def score_realism(
    statistic: SetStatistic,
    pool_features: Tensor,
    pool_labels: Tensor,
    fake_features: Tensor,
    fake_classes: Tensor,
    *,
    conditional: bool,
    generator: torch.Generator,
    n_resamples: int,
    seed: int,
    ci_method: str = "bootstrap",
) -> RealismScore:
    """Score a counterfactual set against real images of its target classes, with floors.

    Args:
        statistic: a two-set statistic such as ``fid``, ``kid_all_pairs`` or
            :func:`~cfcheck.metrics.manifold.coverage` (real, fake).
        pool_features, pool_labels: features and classes of the reference pool.
        fake_features, fake_classes: the counterfactuals' features and target classes.
        conditional: ``True``: per target class k, ``statistic(reference_k, fakes_k)``, pooled
            with weights n_k / n over classes with at least :data:`MIN_PER_CLASS`
            counterfactuals. ``False``: one statistic against the union of the per-class
            reference draws, i.e. real images with the counterfactuals' class mix.
        generator: seeds the reference and floor draws.
        n_resamples, seed, ci_method: the CI resamples counterfactuals and reference within
            each class: ``"null_corrected_half_sampling"`` (FID), ``"half_sampling"`` (kernel
            statistics such as KID), ``"centred_half_sampling"`` (k-nearest-neighbour density and
            coverage) or ``"bootstrap"`` (bias-shifted to centre on the value); see
            :func:`~cfcheck.metrics.set_intervals.bootstrap_set_ci`.

    Returns:
        A :class:`RealismScore` with the value, CI, n, the floor of every draw and the classes
        left out for having too few counterfactuals.
    """
    classes, counts = fake_classes.unique(return_counts=True)
    all_counts = {int(c): int(k) for c, k in zip(classes, counts)}
    kept = {c: k for c, k in all_counts.items() if k >= MIN_PER_CLASS} if conditional else all_counts
    skipped = sorted(set(all_counts) - set(kept))
    if sum(kept.values()) < 2:
        raise ValueError("fewer than two counterfactuals in classes that can be scored; realism needs a set")
    draw = draw_reference(pool_labels, kept, generator=generator)
    order = sorted(kept)
    fakes = [fake_features[fake_classes == c] for c in order]
    reference = [pool_features[draw.reference[c]] for c in order]
    weights = np.array([kept[c] for c in order], dtype=np.float64) / sum(kept.values())

    def pooled(real_parts: tuple[Tensor, ...], fake_parts: tuple[Tensor, ...]) -> float:
        if conditional:
            return float(sum(w * statistic(r, f) for w, r, f in zip(weights, real_parts, fake_parts)))
        return statistic(torch.cat(real_parts), torch.cat(fake_parts))

    floor_sets = [tuple(pool_features[floor[c]] for c in order) for floor in draw.floors]
    engine = set_statistic_engine(statistic)
    resampled = null_resampled = None
    if engine is None:  # any other statistic: one call per set and per resample
        value = pooled(tuple(reference), tuple(fakes))
        floors = [pooled(tuple(reference), floor_set) for floor_set in floor_sets]
    else:
        value, floors, resampled = _with_engine(engine, reference, fakes, floor_sets, weights, conditional)
        if ci_method == "null_corrected_half_sampling":  # the null splits index the pooled strata on both sides
            both = cast(list[Tensor], list(null_strata(reference, fakes)))  # tensors in, tensors out
            null_resampled = _with_engine(engine, both, both, [], weights, conditional, real_only=False)[2]
    ci = bootstrap_set_ci(
        tuple(reference),
        tuple(fakes),
        pooled,
        n_resamples=n_resamples,
        seed=seed,
        point=value,
        method=ci_method,
        resampled=resampled,
        null_resampled=null_resampled,
    )
    return RealismScore(value, ci, sum(kept.values()), floors, skipped)


def _with_engine(
    engine: type[FidSets] | type[KidSets] | Callable[[Tensor], KnnSets],
    reference: list[Tensor],
    fakes: list[Tensor],
    floor_sets: list[tuple[Tensor, ...]],
    weights: np.ndarray,
    conditional: bool,
    real_only: bool = True,
) -> tuple[float, list[float], BatchedSetStatistic]:
    """The value, floors and batched resample statistic of :func:`score_realism` through a
    set engine: each reference's own terms are computed once for the value and every floor,
    and all resamples are evaluated together from index counts. Same numbers as calling the
    statistic on each set (up to rounding). ``real_only``: ``reference`` holds real images
    only, so its terms and the floors are method-independent and kept with the derived data
    (:mod:`cfcheck.metrics.reference_store`); the null splits, which pool counterfactuals in, are not."""
    counterfactuals = tuple(fakes)
    # the real features' digests key the stored terms and floors: each computed once
    digests = [tensor_digest(r) for r in reference] if real_only and conditional else []
    if conditional:
        engines = (
            [stored_engine(engine(r), d) for r, d in zip(reference, digests)]
            if real_only
            else [engine(r) for r in reference]
        )

        def pooled(fake_parts: tuple[Tensor, ...]) -> float:
            return float(sum(w * e(f) for w, e, f in zip(weights, engines, fake_parts)))

        def resampled(index_real: tuple[np.ndarray, ...], index_fake: tuple[np.ndarray, ...]) -> np.ndarray:
            parts = zip(weights, engines, fakes, index_real, index_fake)
            return sum(w * e.resampled(f, ir, i_f) for w, e, f, ir, i_f in parts)  # type: ignore[return-value]

    else:
        whole = engine(torch.cat(reference))
        if real_only:
            digests = [tensor_digest(whole.real)]
            stored_engine(whole, digests[0])
        all_fakes = torch.cat(fakes)
        offsets_real = np.cumsum([0] + [len(r) for r in reference])
        offsets_fake = np.cumsum([0] + [len(f) for f in fakes])

        def pooled(fake_parts: tuple[Tensor, ...]) -> float:  # the counterfactuals as the resamples take them
            return whole(all_fakes if fake_parts is counterfactuals else torch.cat(fake_parts))

        def resampled(index_real: tuple[np.ndarray, ...], index_fake: tuple[np.ndarray, ...]) -> np.ndarray:
            real = np.hstack([i + o for i, o in zip(index_real, offsets_real)])
            fake = np.hstack([i + o for i, o in zip(index_fake, offsets_fake)])
            return whole.resampled(all_fakes, real, fake)

    if not real_only:
        return pooled(counterfactuals), [pooled(f) for f in floor_sets], resampled
    name = (engines[0] if conditional else whole).name
    floors = stored_floors(name, conditional, ",".join(digests), floor_sets, lambda: [pooled(f) for f in floor_sets])
    return pooled(counterfactuals), floors, resampled
