"""Growing Spheres on latent classifiers whose nearest enemy is known in closed form."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.kinds.latent.methods.growing_spheres import GrowingSpheres, sample_spherical_layer


@given(low=st.floats(0.0, 5.0), width=st.floats(0.1, 5.0), d=st.integers(1, 12), seed=st.integers(0, 1000))
@settings(max_examples=40, deadline=None)
def test_layer_samples_lie_in_the_layer(low, width, d, seed):
    center = torch.randn(d, generator=torch.Generator().manual_seed(seed))
    points = sample_spherical_layer(center, low, low + width, 64, torch.Generator().manual_seed(seed))
    distance = (points - center).norm(dim=1)
    assert points.shape == (64, d)
    assert bool((distance >= low * (1 - 1e-5)).all()) and bool((distance <= (low + width) * (1 + 1e-5)).all())


def test_layer_radii_are_uniform_in_volume():
    """In 3-d the radius of a uniform point in the unit ball has P(r ≤ 1/2) = 1/8."""
    points = sample_spherical_layer(torch.zeros(3), 0.0, 1.0, 40_000, torch.Generator().manual_seed(0))
    share = float(((points.norm(dim=1)) <= 0.5).double().mean())
    assert abs(share - 1 / 8) < 4 * math.sqrt((1 / 8) * (7 / 8) / 40_000)


def test_enemies_cross_the_boundary_nearby_and_only_along_the_relevant_axis(toys):
    # the class depends on the first coordinate only: boundary at z0 = 1; the input sits at distance 1
    classifier = toys.Halfspace([1.0, 0.0, 0.0, 0.0], 1.0)
    z = torch.zeros(5, 4)
    z[:, 1:] = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    cfs = GrowingSpheres(k=4, radius=2.0, candidates=50).explain(
        z, classifier, None, rng=torch.Generator().manual_seed(0)
    )
    assert cfs.shape == (5, 4, 4)
    assert bool((classifier(cfs.reshape(-1, 4)).argmax(1) == 1).all())  # every one is an enemy
    # sparse: only the first coordinate differs from the input
    torch.testing.assert_close(cfs[..., 1:], z[:, None, 1:].expand(5, 4, 3))
    # found in the first layer beyond the last enemy-free ball, whose width is at most η
    assert bool((cfs[..., 0] > 1.0).all()) and bool((cfs[..., 0] <= 1.0 + 2.0 * 2 + 1e-4).all())


def test_a_seeded_call_is_reproducible_and_the_input_untouched(toys):
    classifier = toys.Halfspace([1.0, -1.0], 0.5)
    z = torch.zeros(3, 2)
    before = z.clone()
    method = GrowingSpheres(k=3, radius=1.0)
    first = method.explain(z, classifier, None, rng=torch.Generator().manual_seed(7))
    second = method.explain(z, classifier, None, rng=torch.Generator().manual_seed(7))
    assert torch.equal(first, second) and torch.equal(z, before)


def test_an_input_without_a_reachable_enemy_gets_itself_back(toys):
    constant = toys.Halfspace([0.0, 0.0], 1.0)  # class 0 everywhere
    z = torch.ones(2, 2)
    cfs = GrowingSpheres(k=2, radius=1.0, max_layers=3).explain(z, constant, None, rng=torch.Generator().manual_seed(0))
    assert torch.equal(cfs, z[:, None].expand(2, 2, 2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 0}, "k"),
        ({"radius": -1.0}, "radius"),
        ({"candidates": 1.5}, "candidates"),
        ({"max_layers": 0}, "max_layers"),
    ],
)
def test_settings_are_validated(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        GrowingSpheres(**kwargs)


def test_inputs_are_validated(toys):
    with pytest.raises(TypeError, match="z must be a float N×D tensor"):
        GrowingSpheres().explain(torch.zeros(3, dtype=torch.long), toys.Halfspace([1.0], 0.0), None)
