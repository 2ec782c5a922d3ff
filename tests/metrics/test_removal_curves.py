"""ROAR's fixed-value removal, GOAR's feature removal and projection, and the curve summaries,
against loops, numpy and the Gaussian mixture's known geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.domains import get_domain
from cfcheck.metrics.removal import removal_mask
from cfcheck.metrics.removal_curves import cumulative_errors, curve_area, feature_removal, fixed_value_removal
from cfcheck.models.generative.diffusion.projection import GOAR_EXTRA_STEPS, manifold_projection, strength_start_index


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.floats(0, 1), st.integers(0, 10_000))
def test_fixed_value_removal_matches_a_loop(n, c, fraction, seed):
    g = torch.Generator().manual_seed(seed)
    x, a = torch.rand(n, c, 5, 4, generator=g), torch.randn(n, c, 5, 4, generator=g)
    value = torch.rand(c, generator=g)
    mask = removal_mask(a, fraction)
    out = fixed_value_removal(x, mask, value)
    expected = x.clone()
    for i in range(n):
        for row in range(5):
            for col in range(4):
                if mask[i, row, col]:
                    expected[i, :, row, col] = value
    assert torch.equal(out, expected)


def test_fixed_value_removal_rejects_bad_shapes():
    with pytest.raises(ValueError, match="bool mask"):
        fixed_value_removal(torch.rand(2, 1, 3, 3), torch.zeros(2, 3, 3), torch.zeros(1))
    with pytest.raises(ValueError, match="one entry per channel"):
        fixed_value_removal(torch.rand(2, 2, 3, 3), torch.zeros(2, 3, 3, dtype=torch.bool), torch.zeros(3))


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.just(0.0), st.floats(1e-3, 50)), st.integers(0, 10_000))
def test_feature_removal_moves_by_the_strength_against_the_feature(strength, seed):
    g = torch.Generator().manual_seed(seed)
    x, a = (
        torch.randn(4, 2, 3, 3, generator=g, dtype=torch.float64),
        torch.randn(4, 2, 3, 3, generator=g, dtype=torch.float64),
    )
    moved = feature_removal(x, a, strength)
    step = (x - moved).flatten(1)
    torch.testing.assert_close(step.norm(dim=1), torch.full((4,), strength, dtype=torch.float64))
    cosine = torch.nn.functional.cosine_similarity(step, a.flatten(1), dim=1)
    if strength > 0:
        torch.testing.assert_close(cosine, torch.ones(4, dtype=torch.float64))


def test_a_zero_attribution_removes_nothing():
    x = torch.randn(3, 5)
    assert torch.equal(feature_removal(x, torch.zeros(3, 5), 4.0), x)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.integers(1, 6), st.integers(0, 10_000))
def test_curve_area_is_numpys_trapezoid_over_the_span(levels, n, seed):
    g = torch.Generator().manual_seed(seed)
    positions = torch.cumsum(torch.rand(levels, generator=g) + 0.1, 0).tolist()
    values = torch.rand(levels, n, generator=g, dtype=torch.float64)
    expected = [np.trapezoid(values[:, i].numpy(), positions) / (positions[-1] - positions[0]) for i in range(n)]
    np.testing.assert_allclose(curve_area(values, positions).numpy(), expected, rtol=1e-12)
    assert float(curve_area(torch.full((levels, 1), 0.3), positions)) == pytest.approx(0.3)


def test_curve_area_rejects_decreasing_levels():
    with pytest.raises(ValueError, match="increase"):
        curve_area(torch.zeros(3, 2), [0.0, 0.5, 0.4])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=6))
def test_cumulative_errors_match_a_loop(rows):
    correct = torch.tensor(rows)
    out = cumulative_errors(correct)
    for i in range(correct.shape[1]):
        wrong_so_far = False
        for level in range(correct.shape[0]):
            wrong_so_far = wrong_so_far or not bool(correct[level, i])
            assert out[level, i] == float(wrong_so_far)


def test_strength_matches_the_timestep_by_brute_force():
    denoiser = get_domain("gmm").exact_denoiser()
    scheduler = denoiser.sampling_scheduler()
    scheduler.set_timesteps(25)
    grid = [int(t) for t in scheduler.timesteps]
    a = denoiser.alphas_cumprod.double()
    for strength in (0.5, 4.0, 16.0, 60.0):
        sigma = strength / math.sqrt(64)
        t = min(range(len(a)), key=lambda k: abs(math.sqrt((1 - a[k]) / a[k]) - sigma))
        expected = min(range(len(grid)), key=lambda i: abs(grid[i] - t))
        assert strength_start_index(strength, 64, denoiser, grid) == expected


def test_projection_brings_moved_points_back_to_a_class_cluster():
    domain = get_domain("gmm")
    x = domain.split("test", 400).x
    direction = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    moved = feature_removal(x, direction, 8.0)

    def cluster_distance(points):  # distance to the nearest class mean; in the data: √(64·0.3) ≈ 4.4
        return torch.cdist(points.double(), domain.means).min(1).values.median()

    assert cluster_distance(x) == pytest.approx(math.sqrt(64 * 0.3), rel=0.05)
    assert cluster_distance(moved) > 8.0  # √(4.4² + 8²) ≈ 9.1: off the manifold
    projected = manifold_projection(moved, 8.0, domain.exact_denoiser(), generator=torch.Generator().manual_seed(1))
    assert cluster_distance(projected) == pytest.approx(math.sqrt(64 * 0.3), rel=0.1)
    # a random move of this size keeps most points in their class (it is mostly orthogonal to μ₁ − μ₂)
    assert float((domain.class_posterior(projected).argmax(1) == domain.split("test", 400).labels).float().mean()) > 0.9


def test_extra_noise_is_four_steps_of_twenty_five():
    assert pytest.approx(0.16) == GOAR_EXTRA_STEPS / 25
