"""Realism: do counterfactuals look like real images of their target class? (Väth et al.
2023 §3.3; FID on a domain network as in Hvilshøj et al. 2021 §3.1)

FID, KID, density and coverage (Naeem et al. 2020, k-nearest-neighbour balls around the real
images) use the bundled domain embedding network's features, standardised with fixed
statistics of real validation images. ``*_target`` scores each target class against real
images of that class and pools the classes; ``*_domain`` scores the whole set against real
images with the counterfactuals' class mix. Every score is judged against the real-vs-real
floor of the same run: the same statistic for sets of real images (from the never-scored
reference split) with the counterfactuals' n and class mix, drawn several times
(``extra.real_floor``). See :mod:`cfcheck.metrics.reference_sets` and ``cfcheck cards fid_target``.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.core.seeds import REALISM_DRAWS, seeded
from cfcheck.core.set_features import SetFeatures
from cfcheck.kinds.base import labels_where
from cfcheck.metrics.interpretability import im1, im2
from cfcheck.metrics.reference_sets import REALISM_STATISTICS, score_realism

pytestmark = pytest.mark.cfcheck_kind("vce")

#: FID/KID are recomputed per resample (per class for the class-conditional scores).
SET_BOOTSTRAP_RESAMPLES = 200
#: Higher is better for these: their floor is the lowest real-vs-real draw, not the highest.
HIGHER_IS_BETTER = ("density", "coverage")


@pytest.mark.parametrize(
    "metric",
    [
        "fid_target",
        "fid_domain",
        "kid_target",
        "kid_domain",
        "density_target",
        "density_domain",
        "coverage_target",
        "coverage_domain",
    ],
)
def test_realism(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_evaluation_models, metric):
    """FID / KID / density / coverage of the counterfactuals against real images, class-conditional
    or class-matched."""
    keep = cfcheck_result.valid
    if int(keep.sum()) < 2:
        cfcheck_score.unavailable(metric, f"{int(keep.sum())} counterfactuals produced; realism needs a set of ≥ 2")
    pool_features, pool_labels = cfcheck_evaluation_models.realism_pool_for(cfcheck_result.target[keep])
    seed = cfcheck_result.task.seed
    fake_features = cfcheck_result.evaluated("embedding", lambda: cfcheck_evaluation_models.embed(cfcheck_result.x_cf))[
        keep
    ]
    try:
        score = score_realism(
            REALISM_STATISTICS[metric.split("_")[0]][0],
            pool_features,
            pool_labels,
            fake_features,
            cfcheck_result.target[keep],
            conditional=metric.endswith("_target"),
            generator=torch.Generator().manual_seed(seeded(seed, REALISM_DRAWS, 1)),
            n_resamples=min(SET_BOOTSTRAP_RESAMPLES, cfcheck_session.profile.bootstrap_resamples),
            seed=seed,
            ci_method=REALISM_STATISTICS[metric.split("_")[0]][1],
        )
    except ValueError as error:
        cfcheck_score.unavailable(metric, str(error))
    cfcheck_score(
        metric,
        value=score.value,
        ci=score.ci,
        n=score.n,
        floor=min(score.floors) if metric.startswith(HIGHER_IS_BETTER) else score.floor_max,
        extra={"real_floor": score.floors, "classes_skipped": score.classes_skipped},
        set_features=cfcheck_result.evaluated(
            "kept features for paired tests",
            lambda: SetFeatures.draw(
                fake_features,
                cfcheck_result.target[keep],
                labels_where(cfcheck_result.sample_labels, keep)["input"],
                pool_features,
                pool_labels,
                seed=seed,
            ),
        ),
    )


@pytest.mark.parametrize("metric", ["im1", "im2"])
def test_autoencoder_interpretability(cfcheck_result, cfcheck_score, cfcheck_evaluation_models, metric):
    """IM1 / IM2 with the domain's per-class and all-class autoencoders (Van Looveren & Klaise)."""
    zoo = cfcheck_evaluation_models
    if None not in zoo.autoencoders:
        pytest.skip(f"the {zoo.domain} domain bundles no IM1/IM2 autoencoders")
    keep = cfcheck_result.valid
    if int(keep.sum()) == 0:
        cfcheck_score.unavailable(metric, "the method abstained on every input; nothing to measure")
    cfs = cfcheck_result.x_cf[keep]
    by_target = cfcheck_result.evaluated(
        "reconstruction by the target class's autoencoder",
        lambda: zoo.reconstruct(cfcheck_result.x_cf, cfcheck_result.target),
    )[keep]
    if metric == "im1":
        values = im1(cfs, by_target, zoo.reconstruct(cfs, cfcheck_result.source[keep]))
    else:
        values = im2(cfs, by_target, zoo.reconstruct(cfs))
    cfcheck_score(metric, values, labels=labels_where(cfcheck_result.sample_labels, keep))
