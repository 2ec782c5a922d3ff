"""Seconds of the eight VCE realism scores on one task, computing realism's method-independent work
or reading it from the derived data, side by side.

    OMP_NUM_THREADS=1 pytest benchmarks/test_realism.py --benchmark-only [--bench-n 120]

One task of N counterfactual-like sets (N = 1,000, the full profile's task, by default; 120 is a
quick-profile task): the domain embedding of the first N images of morpho's scored split, each
labelled with the next digit as its target, scored with every statistic of
:data:`cfcheck.metrics.reference_sets.REALISM_STATISTICS`, class-conditional and over the whole set,
against the domain's reference pool, with five real-vs-real floors and a 200-resample set CI, as
``suites/vce/test_realism.py`` does. ``cold``: the reference terms and floors are computed (the
derived-data store off); ``warm``: read from a derived-data folder the warm-up round filled. The
benchmark records the ratio cold / warm and checks that both give the same numbers.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.core.seeds import REALISM_DRAWS, seeded
from cfcheck.domains import get_domain
from cfcheck.metrics import reference_store
from cfcheck.metrics.reference_sets import REALISM_STATISTICS, RealismScore, score_realism
from cfcheck.models.zoo import ModelZoo

SET_RESAMPLES = 200  # suites/vce/test_realism.py


@pytest.fixture(scope="module")
def task(size):
    zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    scored = zoo.domain.split(zoo.domain.split_roles["scored"])
    n = size(1000)
    target = (scored.labels[:n] + 1) % zoo.domain.num_classes
    features = zoo.embed(scored.images[:n])
    return features, target, *zoo.realism_pool_for(target)


def score_all(
    features: torch.Tensor,
    target: torch.Tensor,
    pool: torch.Tensor,
    labels: torch.Tensor,
) -> dict[str, RealismScore]:
    reference_store.forget_recent()  # every round reads what it does not compute from disk
    return {
        f"{name}_{part}": score_realism(
            statistic,
            pool,
            labels,
            features,
            target,
            conditional=part == "target",
            generator=torch.Generator().manual_seed(seeded(0, REALISM_DRAWS, 1)),
            n_resamples=SET_RESAMPLES,
            seed=0,
            ci_method=ci_method,
        )
        for name, (statistic, ci_method) in REALISM_STATISTICS.items()
        for part in ("target", "domain")
    }


_SCORES: dict[str, dict[str, RealismScore]] = {}


@pytest.mark.parametrize("store", ["cold", "warm"])
def test_realism_scores(benchmark, figures, task, store, tmp_path, monkeypatch):
    benchmark.group = f"realism: eight scores on a task of {len(task[0])}"
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1" if store == "cold" else "0")
    _SCORES[store] = benchmark.pedantic(
        score_all, args=task, rounds=3, iterations=1, warmup_rounds=1 if store == "warm" else 0
    )
    figures.keep(f"realism:{store}")
    figures.ratio("cold_over_warm", "realism:cold", "realism:warm")
    if len(_SCORES) == 2:  # the same numbers either way
        cold, warm = _SCORES["cold"], _SCORES["warm"]
        assert all(
            (cold[k].value, cold[k].ci, cold[k].floors) == (warm[k].value, warm[k].ci, warm[k].floors) for k in cold
        )
