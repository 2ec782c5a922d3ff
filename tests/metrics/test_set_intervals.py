"""The null correction of FID's half-sampling interval (cfcheck.metrics.set_intervals)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.metrics.realism import fid
from cfcheck.metrics.set_intervals import bootstrap_set_ci, draw_splits, null_correction, null_strata


def test_null_strata_moves_the_second_set_onto_the_first_sets_mean():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(7, 3)) + 2.0, rng.normal(size=(4, 3)) * 3.0 - 1.0
    (pooled,) = null_strata([a], [b])
    assert pooled.shape == (11, 3)
    np.testing.assert_allclose(pooled[:7], a)
    np.testing.assert_allclose(pooled[7:].mean(0), a.mean(0), atol=1e-12)
    np.testing.assert_allclose(pooled[7:] - pooled[7:].mean(0), b - b.mean(0), atol=1e-12)  # spread kept
    (as_tensor,) = null_strata([torch.from_numpy(a)], [torch.from_numpy(b)])
    np.testing.assert_allclose(as_tensor.numpy(), pooled)


def test_null_strata_rejects_mismatched_strata():
    with pytest.raises(ValueError, match="same number of strata"):
        null_strata([np.zeros((3, 2))], [np.zeros((3, 2)), np.zeros((2, 2))])
    with pytest.raises(TypeError, match="must both be torch tensors or both numpy"):
        null_strata([np.zeros((3, 2))], [torch.zeros(3, 2)])


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), min_size=1, max_size=4),
    resamples=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_draw_splits_partitions_every_stratum(sizes, resamples, seed):
    first, second = draw_splits(sizes, resamples, np.random.default_rng(seed))
    for (m_a, m_b), x, y in zip(sizes, first, second):
        assert x.shape == (resamples, m_a) and y.shape == (resamples, m_b)
        for r in range(resamples):
            assert sorted(np.concatenate([x[r], y[r]])) == list(range(m_a + m_b))


@settings(max_examples=60, deadline=None)
@given(
    half=st.lists(st.floats(-50, 50), min_size=2, max_size=30),
    null=st.lists(st.floats(-50, 50), min_size=2, max_size=30),
)
def test_null_correction_matches_its_formula_and_bounds(half, null):
    half, null = np.array(half), np.array(null)
    factor = null_correction(half, null)
    v_half = sum((h - half.mean()) ** 2 for h in half) / (len(half) - 1)
    v_null = sum((v - null.mean()) ** 2 for v in null) / (len(null) - 1)
    if v_half <= 0:
        assert factor == 1.0
        return
    assert factor == pytest.approx(np.sqrt(max(v_half - 2 * v_null, v_null) / v_half), rel=1e-9, abs=1e-12)
    assert factor >= np.sqrt(v_null / v_half) * (1 - 1e-9)  # never below the degenerate part
    if v_null <= v_half / 3:
        assert factor <= 1.0 + 1e-12  # a narrowing only where the null is a share of the half-samples' variance


def test_the_degenerate_case_is_scaled_by_about_one_over_root_three():
    """Two samples of one distribution: FID is degenerate, half-samples vary about 3× as much as FID
    between fresh pairs of samples, and the null splits about as much, so the factor is near 1/√3."""
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(400, 4)), rng.normal(size=(200, 4))
    kwargs = dict(n_resamples=400, seed=1, point=fid(a, b))
    centred = bootstrap_set_ci(a, b, fid, method="centred_half_sampling", **kwargs)
    corrected = bootstrap_set_ci(a, b, fid, method="null_corrected_half_sampling", **kwargs)
    ratio = (corrected[1] - corrected[0]) / (centred[1] - centred[0])
    assert 0.5 < ratio < 0.75, ratio
    fresh = [fid(rng.normal(size=(400, 4)), rng.normal(size=(200, 4))) for _ in range(400)]
    spread = np.subtract(*np.percentile(fresh, [97.5, 2.5]))
    assert 0.8 < (corrected[1] - corrected[0]) / spread < 1.35
    assert (centred[1] - centred[0]) / spread > 1.35  # the uncorrected half-sampling is too wide here


def test_a_mean_shift_leaves_the_factor_near_one():
    """Far-apart sets: FID's linear part dominates, the null is small beside the half-samples."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(400, 4)), rng.normal(size=(200, 4)) + 3.0
    kwargs = dict(n_resamples=400, seed=1, point=fid(a, b))
    centred = bootstrap_set_ci(a, b, fid, method="centred_half_sampling", **kwargs)
    corrected = bootstrap_set_ci(a, b, fid, method="null_corrected_half_sampling", **kwargs)
    assert (corrected[1] - corrected[0]) / (centred[1] - centred[0]) > 0.97
