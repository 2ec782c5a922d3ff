"""Realism's method-independent work, computed once per machine and kept with the derived data.

A realism score compares a counterfactual set with a reference of real images and with several
real-vs-real floor sets (:mod:`cfcheck.metrics.reference_sets`). Two parts of that depend only on
the real images, never on the method:

- the reference's own terms: FID's mean, covariance and its square root, KID's within-set kernel
  mean, the k-NN balls' radii and each real row's nearest neighbours (:meth:`state` of the
  engines in :mod:`cfcheck.metrics.set_statistics` and :mod:`cfcheck.metrics.manifold`);
- the floors: the statistic of every floor set against the reference;
- the real side of the set CIs' resamples: the CI draws each resample's real rows from its seed and
  the reference's size alone, so KID's within-set term of every real resample and the k-NN balls'
  radii ranked within every real resample (the engines' ``real_side`` terms) are the same whatever
  the method; they are keyed by a digest of the drawn row indices as well. FID's would be a mean
  and a covariance per resample and class, more disk than their computation takes time, so FID
  recomputes them.

All three are kept as verified derived-data entries (:func:`cfcheck.core.cache.memoise_on_disk`),
keyed by a sha256 digest of the real features they are computed from (the reference split, the
embedding network, the task's size and class mix and the draw's seed all reach the score only
through those features), the statistic and its options, :data:`REALISM_DERIVED_VERSION` and the
number of torch threads (a covariance or a matrix square root summed over two threads can differ
from one thread's in the last bits, so a process reads only terms computed as it would compute
them).
Every later run on the machine reads them, whatever the method, in any process (xdist workers,
shards). A changed reference split or embedding changes the digest, so the terms are computed
anew; a damaged entry is discarded with a warning and recomputed, never trusted. The loaded
numbers are the stored float64 values, so scores are the same bit for bit either way.
``CFCHECK_NO_DERIVED_CACHE=1`` turns the store off.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol, TypeVar

import numpy as np
import torch
from torch import Tensor

from cfcheck.core.cache import memoise_on_disk, tensor_digest
from cfcheck.metrics.realism import RealSideTerms

__all__ = [
    "RECENT_STATES",
    "REALISM_DERIVED_VERSION",
    "ReferenceEngine",
    "forget_recent",
    "stored_engine",
    "stored_floors",
]

#: Bump when the reference terms or the floors would be computed differently: every stored entry
#: of an older version is then ignored (and recomputed on first use).
REALISM_DERIVED_VERSION = 1


class ReferenceEngine(Protocol):
    """A set statistic's engine over one real set (:class:`~cfcheck.metrics.set_statistics.FidSets`,
    :class:`~cfcheck.metrics.set_statistics.KidSets`, :class:`~cfcheck.metrics.manifold.KnnSets`)."""

    real: Tensor
    name: str
    reference_key: str
    real_side: RealSideTerms

    def state(self) -> dict[str, Tensor]: ...

    def load_state(self, state: dict[str, Tensor]) -> None: ...

    def __call__(self, fake_features: Tensor) -> float: ...


EngineT = TypeVar("EngineT", bound=ReferenceEngine)

#: Reference terms of the most recent references stay in memory, so the scores of one task that
#: share a reference (density and coverage: the same k-NN terms) share the tensors too, and the
#: engines' per-reference memos (:class:`~cfcheck.metrics.manifold.KnnSets`' ranked resamples).
RECENT_STATES = 8
_RECENT: OrderedDict[str, dict[str, Tensor]] = OrderedDict()


def stored_engine(engine: EngineT, digest: str | None = None) -> EngineT:
    """Give ``engine`` its reference's own terms from the derived data, computing and storing them
    on a miss.

    Args:
        engine: a fresh engine over the reference's real features.
        digest: :func:`~cfcheck.core.cache.tensor_digest` of ``engine.real`` if the caller has it.

    Returns:
        The same engine, its terms loaded (the stored values, bit for bit), and the real side of
        its resamples read from and kept with the derived data from now on.

    Example:
        >>> from cfcheck.metrics.set_statistics import FidSets
        >>> real = torch.randn(20, 3, dtype=torch.float64)
        >>> stored_engine(FidSets(real))(real) == FidSets(real)(real)
        True
    """
    parts: dict[str, str | int] = {
        "engine": engine.reference_key,
        "reference": digest or tensor_digest(engine.real),
        "version": REALISM_DERIVED_VERSION,
        "threads": torch.get_num_threads(),
    }
    key = json.dumps(parts, sort_keys=True)
    state = _RECENT.pop(key, None)
    if state is None:
        state = memoise_on_disk("realism.reference_terms", engine.state, **parts)
    _RECENT[key] = state  # the most recent last
    while len(_RECENT) > RECENT_STATES:
        _RECENT.popitem(last=False)
    engine.load_state(state)
    engine.real_side = partial(_stored_real_side, parts)
    return engine


def _stored_real_side(
    parts: dict[str, str | int], term: str, real_index: np.ndarray, compute: Callable[[], Tensor]
) -> Tensor:
    """An engine's :data:`~cfcheck.metrics.realism.RealSideTerms` once it is stored: the term of
    these real rows' resamples from the derived data, or ``compute()`` on a miss."""
    rows = tensor_digest(torch.from_numpy(np.ascontiguousarray(real_index)))
    return memoise_on_disk("realism.resample_terms", lambda: {"term": compute()}, **parts, term=term, rows=rows)["term"]


def forget_recent() -> None:
    """Drop the reference terms held in this process (the next engine reads them from disk, as
    another process would)."""
    _RECENT.clear()


def stored_floors(
    statistic: str,
    conditional: bool,
    reference: str,
    floor_sets: Sequence[Sequence[Tensor]],
    compute: Callable[[], list[float]],
) -> list[float]:
    """The real-vs-real floors of one realism score, from the derived data or ``compute()``.

    Args:
        statistic: the engine's ``name`` (the statistic and its options).
        conditional: whether the score is class-conditional (pooled over classes).
        reference: digests of the reference's real features (its parts', in order, or the whole's).
        floor_sets: each floor set's real features, one part per class (in the reference's order).
        compute: computes the floors (one float per floor set) on a miss.

    Returns:
        One floor per floor set.

    Example:
        >>> parts = [torch.ones(2, 1, dtype=torch.float64)]
        >>> stored_floors("doc", False, tensor_digest(*parts), [parts], lambda: [0.5])
        [0.5]
    """
    floors = [part for floor in floor_sets for part in floor]
    key: dict[str, str | int] = {
        "statistic": statistic,
        "conditional": int(conditional),
        "version": REALISM_DERIVED_VERSION,
        "threads": torch.get_num_threads(),
        "reference": reference,
        "floors": tensor_digest(*floors) if floors else "none",
        "parts": ",".join(str(len(f)) for f in floor_sets),
    }
    found = memoise_on_disk("realism.floors", lambda: {"floors": torch.tensor(compute(), dtype=torch.float64)}, **key)
    return [float(value) for value in found["floors"]]
