"""SCM realism's reference: real images rendered with the counterfactual parents; scores of sets
whose answer is known by construction."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.kinds.base import EvaluatedOnce
from cfcheck.kinds.scm.realism import reference_renders, scm_realism
from cfcheck.metrics.realism import fid
from cfcheck.models.zoo import ModelZoo

N = 60


@pytest.fixture(scope="module")
def morpho():
    domain = get_domain("morpho")
    parents = domain.parents(domain.split_roles["scored"], torch.arange(N))
    return domain, parents, ModelZoo(get_domain("morpho"), torch.device("cpu"))


class _Result(SimpleNamespace, EvaluatedOnce):
    """What scm_realism reads of an SCM task's result (its evaluations memoised as a result's are)."""


def _result(domain, parents, x_cf, valid=None):
    return _Result(
        domain=domain,
        task=SimpleNamespace(seed=0),
        target_parents=parents,
        x_cf=x_cf,
        valid=torch.ones(len(x_cf), dtype=torch.bool) if valid is None else valid,
    )


def test_reference_renders_show_the_parents_in_every_copy(morpho):
    domain, parents, _ = morpho
    images = reference_renders(domain, parents, copies=3, seed=11)
    assert images.shape == (3 * N, 1, 32, 32)
    measured = domain.measure_factors(images)
    for copy in range(3):
        rows = slice(copy * N, (copy + 1) * N)
        # intensity is exact; thickness within the measurement's error (MAE 0.125 px on the test split)
        torch.testing.assert_close(measured["intensity"][rows].float(), parents["intensity"].float(), atol=1.0, rtol=0)
        assert (measured["thickness"][rows] - parents["thickness"]).abs().mean() < 0.3
    assert not torch.equal(images[:N], images[N : 2 * N])  # fresh styles per copy


def test_real_images_with_the_parents_sit_at_the_floor_and_other_digits_do_not(morpho):
    domain, parents, zoo = morpho
    real = domain.resample_with_parents(parents, seed=5)  # an independent real set with these parents
    at_floor = scm_realism(_result(domain, parents, real), zoo, fid, n_resamples=20, ci_method="bootstrap")
    assert at_floor.n == N and len(at_floor.floors) == 5
    assert at_floor.value <= 1.5 * at_floor.floor_max, at_floor
    shifted = dict(parents, digit=(parents["digit"] + 1) % 10)  # the images show other digits than asked
    wrong = scm_realism(_result(domain, shifted, real), zoo, fid, n_resamples=20, ci_method="bootstrap")
    assert wrong.value > 3 * wrong.floor_max, wrong


def test_abstentions_are_left_out_and_a_single_counterfactual_is_refused(morpho):
    domain, parents, zoo = morpho
    real = domain.resample_with_parents(parents, seed=5)
    valid = torch.zeros(N, dtype=torch.bool)
    valid[:1] = True
    with pytest.raises(ValueError, match="1 counterfactuals produced; realism needs a set"):
        scm_realism(_result(domain, parents, real, valid), zoo, fid, n_resamples=5, ci_method="bootstrap")
    valid[: N // 2] = True
    half = scm_realism(_result(domain, parents, real, valid), zoo, fid, n_resamples=5, ci_method="bootstrap")
    digits, counts = parents["digit"][: N // 2].unique(return_counts=True)
    # per digit, at least two counterfactuals are needed; the others are reported as skipped
    assert half.n == int(counts[counts >= 2].sum()) and half.classes_skipped == digits[counts < 2].tolist()
