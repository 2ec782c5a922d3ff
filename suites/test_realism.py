"""Realism: do counterfactuals look like real images of their target class? (Väth et al.
2023 §3.3; FID on a domain network as in Hvilshøj et al. 2021 §3.1)

FID and KID use the 64-d features of the bundled domain embedding network. The reference set
is class-matched: one real image of each counterfactual's target class (validation split), so
FID compares like with like; ``fid_domain`` compares with random real images instead. Every
record carries the real-versus-real FID at the same sample size (``extra.real_floor``): the
finite-sample bias no method can go below.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.metrics.realism import fid, kid
from cfcheck.metrics.stats import bootstrap_set_ci

pytestmark = pytest.mark.cfcheck_kind("vce")

REFERENCE_SPLIT = "val"


def _reference(domain, targets, seed, class_matched):
    """Real images: one per target (class-matched) or random ones, drawn without replacement;
    also a disjoint second draw for the real-vs-real floor."""
    data = domain.split(REFERENCE_SPLIT)
    generator = torch.Generator().manual_seed(7919 * seed + 1)
    order = torch.randperm(len(data), generator=generator)
    first, second = [], []
    if class_matched:
        for cls in targets.unique().tolist():
            need = int((targets == cls).sum())
            pool = order[data.labels[order] == cls]
            if len(pool) < 2 * need:
                raise ValueError(f"the {REFERENCE_SPLIT} split has {len(pool)} images of class {cls}, need {2 * need}")
            first.append(pool[:need])
            second.append(pool[need : 2 * need])
        return data.images[torch.cat(first)], data.images[torch.cat(second)]
    n = len(targets)
    return data.images[order[:n]], data.images[order[n : 2 * n]]


@torch.no_grad()
def _embed(models, images, batch_size=512):
    embedding = models.embedding
    return torch.cat(
        [embedding(images[i : i + batch_size].to(models.device)).double().cpu() for i in range(0, len(images), batch_size)]
    )


def _set_score(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session, metric, class_matched):
    keep = cfcheck_vce.valid
    if int(keep.sum()) < 2:
        pytest.fail("fewer than two counterfactuals produced; realism needs a set", pytrace=False)
    targets = cfcheck_vce.target[keep]
    real, real_again = _reference(cfcheck_domain, targets, cfcheck_vce.task.seed, class_matched)
    fake_features = _embed(cfcheck_models, cfcheck_vce.x_cf[keep])
    real_features = _embed(cfcheck_models, real)
    if metric == "kid_target":
        value, std = kid(real_features, fake_features, subsets=50, subset_size=min(len(fake_features), 100))
        ci = (value - 1.96 * std, value + 1.96 * std)
        extra = {"kid_std": std}
    else:
        value = fid(real_features, fake_features)
        ci = bootstrap_set_ci(
            real_features, fake_features, fid, n_resamples=min(200, cfcheck_session.profile.bootstrap_resamples)
        )
        extra = {"real_floor": fid(real_features, _embed(cfcheck_models, real_again))}
    cfcheck_score(metric, value=value, ci=ci, n=len(fake_features), extra=extra)


def test_fid_target_class(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session):
    """FID between counterfactuals and real images of their target classes."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session, "fid_target", True)


def test_fid_domain(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session):
    """FID between counterfactuals and random real images of the domain."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session, "fid_domain", False)


def test_kid_target_class(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session):
    """KID (unbiased polynomial-kernel MMD²) against real images of the target classes."""
    _set_score(cfcheck_vce, cfcheck_score, cfcheck_models, cfcheck_domain, cfcheck_session, "kid_target", True)
