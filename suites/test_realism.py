"""Realism: do counterfactuals look like real images of their target class? (Väth et al.
2023 §3.3; FID on a domain network as in Hvilshøj et al. 2021 §3.1)

FID and KID use the bundled domain embedding network's 64-d features, standardised with
fixed statistics of real validation images. The reference set is large and class-matched:
for every counterfactual, ``REFERENCE_PER_SAMPLE`` real validation images of its target class
(``fid_domain``: of any class). Each record carries the real-versus-real FID at the same
sample size (``extra.real_floor``, real test images drawn the same way): the finite-sample
bias no method can go below.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.metrics.realism import fid, kid
from cfcheck.metrics.stats import bootstrap_set_ci

pytestmark = pytest.mark.cfcheck_kind("vce")

REFERENCE_PER_SAMPLE = 8
SET_BOOTSTRAP_RESAMPLES = 200  # FID/KID are recomputed per resample: keep the count modest
KID_SUBSETS = 50
KID_SUBSETS_PER_RESAMPLE = 10


def _draw(data, classes, per_sample, generator):
    """``per_sample`` images (with replacement) of each requested class, or of any class."""
    picks = []
    for cls in classes.tolist():
        pool = torch.nonzero(data.labels == cls).flatten() if cls >= 0 else torch.arange(len(data))
        picks.append(pool[torch.randint(len(pool), (per_sample,), generator=generator)])
    return data.images[torch.cat(picks)]


def _set_score(result, score, session, metric):
    keep = result.valid
    if int(keep.sum()) < 2:
        pytest.fail("fewer than two counterfactuals produced; realism needs a set", pytrace=False)
    classes = result.target[keep] if metric.endswith("_target") else torch.full((int(keep.sum()),), -1)
    generator = torch.Generator().manual_seed(7919 * result.task.seed + 1)
    reference = session.embed(_draw(session.domain.split("val"), classes, REFERENCE_PER_SAMPLE, generator))
    fake = session.embed(result.x_cf[keep])
    resamples = min(SET_BOOTSTRAP_RESAMPLES, session.profile.bootstrap_resamples)
    floor_set = session.embed(_draw(session.domain.split("test"), classes, 1, generator))
    if metric.startswith("kid"):
        size = min(len(fake), 100)

        def statistic(real, generated, subsets=KID_SUBSETS_PER_RESAMPLE):
            return kid(real, generated, subsets=subsets, subset_size=size, seed=result.task.seed)[0]

        value = statistic(reference, fake, KID_SUBSETS)
        floor = statistic(reference, floor_set, KID_SUBSETS)
    else:
        statistic, value, floor = fid, fid(reference, fake), fid(reference, floor_set)
    ci = bootstrap_set_ci(reference, fake, statistic, n_resamples=resamples, seed=result.task.seed, point=value)
    score(metric, value=value, ci=ci, n=len(fake), extra={"real_floor": floor})


def test_fid_target_class(cfcheck_vce, cfcheck_score, cfcheck_session):
    """FID between counterfactuals and real images of their target classes."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_session, "fid_target")


def test_fid_domain(cfcheck_vce, cfcheck_score, cfcheck_session):
    """FID between counterfactuals and real images of any class."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_session, "fid_domain")


def test_kid_target_class(cfcheck_vce, cfcheck_score, cfcheck_session):
    """KID (unbiased polynomial-kernel MMD²) against real images of the target classes."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_session, "kid_target")


def test_kid_domain(cfcheck_vce, cfcheck_score, cfcheck_session):
    """KID against real images of any class."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_session, "kid_domain")
