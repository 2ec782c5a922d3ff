"""Seconds to score N counterfactuals with every VCE metric the suites compute, CIs included,
against the forward-pass floor of the evaluation networks, side by side.

    OMP_NUM_THREADS=1 pytest benchmarks/test_scoring.py --benchmark-only [--bench-threads 2] [--bench-n 2000]

Counterfactuals: the morpho SCM's true class counterfactuals of the first N reference-split
images (another digit, same style; N = 10,000 by default, ``--bench-n``). Scoring uses the
functions the suites call, on the bundled reference models (``ModelZoo(get_domain("morpho"), cpu)``):
validity proportions with Wilson intervals (TA, TCV, OA, OS and OTA per oracle, committee OTA),
LVS, Minkowski / elastic-net / perceptual distances and unrelated-attribute LVS with bootstrap
CIs (``summarize``), FID, KID, density and coverage, target and domain, with their real-vs-real floors and set CIs
(``score_realism``), OTA gain and randomisation similarity. Per-sample CIs use 500 resamples (the
quick profile's), set CIs 200, as the suites do.

The suites score each task on its own (a classifier × pair set × seed): every CI, and realism
with its reference draw and floors, is per task. The N counterfactuals are split into tasks of
1,000 (the largest task of the full profile: 100 inputs per source class), or one task when
N is smaller.

Realism needs a real pool of ≥ 7 images per counterfactual of each class in a task (a reference
of ≥ 2 per counterfactual plus 5 floor sets). The pool is the domain's 20,000-image reference
split, plus freshly rendered SCM samples where a task needs more (9 × the task size in all;
digits are not exactly balanced; with ``--bench-n`` the pool is only that much of the split, at
least 1,000 images). Rendering and embedding the pool is a once-per-session cost and is
recorded apart (``setup_seconds``). The floor is the evaluation networks' forward passes
on the same images (one warm-up round, then one timed); scoring is one round, whose stages'
seconds are recorded, and its ratio to the floor.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import torch

from cfcheck.core.seeds import REALISM_DRAWS, seeded
from cfcheck.domains import get_domain
from cfcheck.domains.morpho.rendering import render
from cfcheck.domains.morpho.scm import sample_factors
from cfcheck.metrics.closeness import elastic_net_distance, minkowski_distance, perceptual_distance
from cfcheck.metrics.reference_sets import REALISM_STATISTICS, score_realism
from cfcheck.metrics.sanity import ota_gain, randomisation_similarity
from cfcheck.metrics.stats import summarize
from cfcheck.metrics.validity import (
    class_changes,
    committee_target_hits,
    label_variation,
    oracle_agreement,
    oracle_target_hits,
    original_hits,
    target_hits,
)
from cfcheck.models.zoo import ModelZoo

CLASSIFIER = "cnn"
SET_RESAMPLES = 200  # suites/vce/test_realism.py
RESAMPLES = 500  # per-sample CIs: the quick profile's
POOL_FACTOR = 9.0
TASK_SIZE = 1000


def build(n: int, pool_factor: float, task_size: int, pool_size: int | None = None) -> dict[str, torch.Tensor]:
    domain = get_domain("morpho")
    data = domain.split(domain.split_roles["reference"], n=n)
    gen = torch.Generator().manual_seed(0)
    target = (data.labels + torch.randint(1, domain.num_classes, (n,), generator=gen)) % domain.num_classes
    x_cf = domain.class_counterfactual(data.factors, target)
    randomised_cf = (0.7 * x_cf + 0.3 * torch.rand(x_cf.shape, generator=gen)).clamp(0, 1)
    pool = domain.split(domain.split_roles["reference"], n=pool_size)
    extra = max(0, int(pool_factor * (task_size or n)) - len(pool))
    extra_factors = sample_factors(extra, seed=9_001)
    pool_images = torch.cat([pool.images, render(extra_factors)])
    pool_labels = torch.cat([pool.labels, extra_factors.digit.long()])
    return {
        "x": data.images,
        "x_cf": x_cf,
        "target": target,
        "randomised_cf": randomised_cf,
        "pool_images": pool_images,
        "pool_labels": pool_labels,
    }


def score_all(
    zoo: ModelZoo,
    d: dict[str, torch.Tensor],
    resamples: int,
    task_size: int,
    seed: int = 0,
) -> dict[str, float]:
    """Every VCE score with its CI, per task of ``task_size`` counterfactuals (0: one task);
    returns seconds per stage (the forward passes included)."""
    times: dict[str, float] = {}

    def stage(name: str, fn: Callable[[], object]) -> object:
        start = time.perf_counter()
        out = fn()
        times[name] = times.get(name, 0.0) + time.perf_counter() - start
        return out

    def summary(values: torch.Tensor) -> None:
        summarize(values.double().flatten(), n_resamples=resamples, seed=seed)

    x_all, cf_all, target_all = d["x"], d["x_cf"], d["target"]
    names = [CLASSIFIER, *zoo.oracles, *zoo.attribute_oracles.values()]
    logits = stage(
        "forward: classifier + oracles",
        lambda: {(m, on): zoo.logits(m, x_all if on == "x" else cf_all) for m in names for on in ("x", "cf")},
    )
    features_all = stage("forward: embedding (realism)", lambda: zoo.embed(cf_all))
    distances_all = stage("forward: perceptual distance", lambda: perceptual_distance(x_all, cf_all, zoo.feature_maps))
    pool_features, pool_labels = d["pool_features"], d["pool_labels"]
    size = task_size or len(x_all)
    for start in range(0, len(x_all), size):
        rows = slice(start, start + size)
        x, cf, target, features = x_all[rows], cf_all[rows], target_all[rows], features_all[rows]
        pred = {k: v[rows].argmax(1) for k, v in logits.items()}
        prob = {k: v[rows].softmax(1) for k, v in logits.items()}

        def validity() -> None:
            summary(target_hits(pred[CLASSIFIER, "cf"], target))
            summary(class_changes(pred[CLASSIFIER, "cf"], pred[CLASSIFIER, "x"]))
            summary(original_hits(pred[CLASSIFIER, "cf"], pred[CLASSIFIER, "x"]))
            changed = pred[CLASSIFIER, "cf"] != pred[CLASSIFIER, "x"]
            for oracle in zoo.oracles:
                summary(oracle_agreement(pred[CLASSIFIER, "cf"][changed], pred[oracle, "cf"][changed]))
                summary(oracle_target_hits(pred[oracle, "cf"], target))
            summary(committee_target_hits([pred[o, "cf"] for o in zoo.oracles], target))
            digit = zoo.attribute_oracles["digit"]
            summary(label_variation(prob[digit, "x"], prob[digit, "cf"]))

        def closeness() -> None:
            for p in (1.0, 1.5, 2.0):
                summary(minkowski_distance(x, cf, p))
            summary(elastic_net_distance(x, cf))
            for attribute, oracle in zoo.attribute_oracles.items():
                if attribute != "digit":
                    summary(label_variation(prob[oracle, "x"], prob[oracle, "cf"]))
            summary(distances_all[rows])

        stage("validity (Wilson)", validity)
        stage("closeness: distances, LVS (bootstrap)", closeness)
        for statistic, (function, ci_method) in REALISM_STATISTICS.items():
            for metric in (f"{statistic}_target", f"{statistic}_domain"):
                stage(
                    f"realism: {metric} (+5 floors, set CI)",
                    lambda function=function, metric=metric, ci_method=ci_method: score_realism(
                        function,
                        pool_features,
                        pool_labels,
                        features,
                        target,
                        conditional=metric.endswith("_target"),
                        generator=torch.Generator().manual_seed(seeded(seed, REALISM_DRAWS, 1)),
                        n_resamples=min(SET_RESAMPLES, resamples),
                        seed=seed,
                        ci_method=ci_method,
                    ),
                )

        def sanity() -> None:
            hits_cf = committee_target_hits([pred[o, "cf"] for o in zoo.oracles], target)
            hits_x = committee_target_hits([pred[o, "x"] for o in zoo.oracles], target)
            summary(ota_gain(hits_cf, hits_x))
            summary(torch.nan_to_num(randomisation_similarity(x, cf, d["randomised_cf"][rows]), nan=0.0))

        stage("sanity: ota gain, randomisation similarity", sanity)
    return times


def forward_floor(zoo: ModelZoo, d: dict[str, torch.Tensor]) -> float:
    """The evaluation networks' forward passes alone: every model on x and c, the embedding's
    features of c and its feature maps of x and c (the perceptual distance)."""
    start = time.perf_counter()
    for name in [CLASSIFIER, *zoo.oracles, *zoo.attribute_oracles.values()]:
        for images in (d["x"], d["x_cf"]):
            zoo.logits(name, images)
    zoo.features(d["x_cf"])
    for images in (d["x"], d["x_cf"]):
        zoo.feature_maps(images)
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def scoring(size, request):
    n = size(10_000)
    task_size = min(TASK_SIZE, n)
    start = time.perf_counter()
    # the whole reference split as the pool; with --bench-n, as much of it as a task needs (at
    # least 1,000 images: a few counterfactuals can all target one class)
    pool_size = None if request.config.getoption("--bench-n") is None else max(1000, int(POOL_FACTOR * task_size))
    data = build(n, POOL_FACTOR, task_size, pool_size)
    zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    data["pool_features"] = zoo.embed(data["pool_images"])
    return zoo, data, task_size, time.perf_counter() - start


def test_forward_floor(benchmark, figures, scoring):
    zoo, data, _, setup_seconds = scoring
    benchmark.group = f"scoring {len(data['x'])} counterfactuals"
    benchmark.pedantic(forward_floor, args=(zoo, data), rounds=1, iterations=1, warmup_rounds=1)
    figures.keep("scoring:floor")
    figures.record("setup_seconds", setup_seconds, "s (render, embed the real pool, load models; not counted)")


def test_score_all(benchmark, figures, scoring):
    zoo, data, task_size, _ = scoring
    benchmark.group = f"scoring {len(data['x'])} counterfactuals"
    times = benchmark.pedantic(score_all, args=(zoo, data, RESAMPLES, task_size), rounds=1, iterations=1)
    for stage, seconds in times.items():
        figures.record(stage, seconds, "s")
    figures.keep("scoring:all")
    figures.ratio("total_over_forward_floor", "scoring:all", "scoring:floor")
