"""DiCE, xGEM, DiVE, StylEx-AttFind and informed search on latent classifiers whose answers are known."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from cfcheck.kinds.latent.methods.gradient_explainers import XGEM, DiCE, DiVE, fisher_information
from cfcheck.kinds.latent.methods.informed_search import InformedSearch
from cfcheck.kinds.latent.methods.stylex_attfind import StylExAttFind
from cfcheck.metrics.synbols import CategoricalGroup, LatentLayout


def _classes(classifier, z_cf):
    n, k, d = z_cf.shape
    return classifier(z_cf.reshape(n * k, d)).argmax(1).reshape(n, k)


@pytest.mark.parametrize("method", [DiCE(k=4), XGEM(k=4), DiVE(k=4, masked=1)], ids=["dice", "xgem", "dive"])
def test_gradient_explainers_flip_a_halfspace_reproducibly_without_touching_the_input(method, toys):
    classifier = toys.Halfspace([1.0, 0.5, 0.0])
    z = torch.tensor([[-0.4, -0.2, 1.0], [0.3, 0.1, -1.0], [-0.1, 0.0, 0.0]])
    before = z.clone()
    z_cf = method.explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(2))
    assert z_cf.shape == (3, 4, 3) and torch.equal(z, before)
    assert bool((_classes(classifier, z_cf) != classifier(z).argmax(1)[:, None]).all())
    again = method.explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(2))
    assert torch.equal(z_cf, again)


class _NoStop(XGEM):
    stop_probability = None


def test_the_explainers_stop_at_the_flip_and_the_engine_runs_every_step_without_a_stop_rule(toys):
    """DiCE and DiVE freeze an input's K together at the first step where all cross, xGEM each
    counterfactual at its own flip: they stay near the boundary, while the same objective without
    a stop rule (cross-entropy for 50 steps) goes far beyond it."""
    classifier = toys.Halfspace([1.0, 0.0])
    z = torch.tensor([[-0.3, 0.0]])
    for method in (DiCE(k=3, diversity_weight=0.0), XGEM(k=3), DiVE(k=3, masked=0)):
        z_cf = method.explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(0))
        assert bool((z_cf[..., 0] > 0).all()) and float(z_cf[..., 0].max()) < 0.6, method.name
    far = _NoStop(k=3).explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(0))
    assert float(far[..., 0].min()) > 2.0


@given(k=st.integers(2, 5), d=st.integers(1, 4), seed=st.integers(0, 10_000))
@settings(max_examples=30, deadline=None)
def test_dpp_diversity_is_the_determinant_of_the_inverse_distance_kernel(k, d, seed):
    z_cf = torch.randn(2, k, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    expected = []
    for points in z_cf.numpy():
        kernel = np.array([[1.0 / (1.0 + np.abs(a - b).sum()) for b in points] for a in points]) + 1e-4 * np.eye(k)
        expected.append(np.linalg.det(kernel))
    np.testing.assert_allclose(DiCE.dpp_diversity(z_cf).numpy(), expected, rtol=1e-9, atol=1e-12)


def test_dice_diversity_spreads_its_counterfactuals(toys):
    classifier = toys.Halfspace([1.0, 0.0, 0.0])
    z = torch.tensor([[-0.2, 0.0, 0.0]])
    plain = DiCE(k=3, diversity_weight=0.0).explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(1))
    diverse = DiCE(k=3).explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(1))
    assert float(DiCE.dpp_diversity(diverse[None, 0])) > float(DiCE.dpp_diversity(plain[None, 0]))


@given(w=st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=4), seed=st.integers(0, 1000))
@settings(max_examples=30, deadline=None)
def test_fisher_information_of_a_logistic_model_has_its_closed_form(w, seed, toys):
    """logits (−s, s), s = w·z: p = σ(2s) and F_d = 4 w_d² p (1 − p)."""
    classifier = toys.Halfspace(w)
    z = torch.randn(5, len(w), generator=torch.Generator().manual_seed(seed))
    p = torch.sigmoid(2 * (z @ classifier.w)).double()
    expected = 4 * classifier.w.double()[None] ** 2 * (p * (1 - p))[:, None]
    torch.testing.assert_close(fisher_information(classifier, z).double(), expected, rtol=1e-4, atol=1e-6)


def test_dive_leaves_the_most_informative_coordinates_at_the_input(toys):
    classifier = toys.Halfspace([3.0, 0.2, 0.1])  # coordinate 0 has by far the largest Fisher information
    z = torch.tensor([[-0.2, 0.0, 0.0], [0.1, 0.3, -0.3]])
    z_cf = DiVE(k=3, masked=1).explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(0))
    torch.testing.assert_close(z_cf[..., 0], z[:, None, 0].expand(2, 3))
    assert bool((z_cf[..., 1:] != z[:, None, 1:]).any())
    with pytest.raises(ValueError, match="fix all"):
        DiVE(k=2, masked=3).explain(z, classifier, nn.Identity())


def test_dive_perturbation_similarity_matches_a_loop():
    z = torch.zeros(1, 2, dtype=torch.float64)
    z_cf = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]], dtype=torch.float64)
    got = DiVE.perturbation_similarity(z, z_cf)[0]
    vectors = z_cf[0].numpy()
    cos = lambda a, b: abs(a @ b) / np.linalg.norm(a) / np.linalg.norm(b)  # noqa: E731
    expected = [np.mean([cos(vectors[i], vectors[j]) for j in range(3) if j != i]) for i in range(3)]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_stylex_ranks_single_coordinate_shifts_by_their_gain(toys):
    """On s = 2·z0 − z1 from class 0, +shift on z0 gains most, then −shift on z1; a shift on z2
    (no weight) gains nothing, and a shift away from the boundary loses."""
    classifier = toys.Halfspace([2.0, -1.0, 0.0], b=1.0)
    z = torch.zeros(1, 3)
    z_cf = StylExAttFind(k=3, shift_size=0.8).explain(z, classifier, nn.Identity())
    expected = torch.tensor([[[0.8, 0.0, 0.0], [0.0, -0.8, 0.0]]])
    torch.testing.assert_close(z_cf[:, :2], expected)
    assert float(z_cf[0, 2].abs().sum()) == pytest.approx(0.8) and float(z_cf[0, 2, 2].abs()) == pytest.approx(0.8)
    many = StylExAttFind(k=8).explain(z, classifier, nn.Identity())  # 2·D = 6 candidates: cycles
    torch.testing.assert_close(many[:, 6:], many[:, :2])


def _oracle_domain():
    table = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0], [0.0, -2.0], [1.5, 1.5]])
    layout = LatentLayout([CategoricalGroup("font", (0, 2), table, 4.0)], (2, 3), continuous_radius=1.0)
    return SimpleNamespace(spurious_categories={"font": ((0, 3), (1, 2))}, latent_layout=lambda: layout)


def test_informed_search_swaps_in_the_spurious_categories_flips_first(toys):
    # the classifier reads the font's first coordinate only: class 1 where z0 > 0
    classifier = toys.Halfspace([1.0, 0.0, 0.0])
    domain = _oracle_domain()
    z = torch.tensor([[-2.0, 0.0, 0.7]])  # font 1 (label 1's group), predicted class 0
    z_cf = InformedSearch(k=4).explain(z, classifier, nn.Identity(), oracle_domain=domain)
    fonts = [int((domain.latent_layout().categorical[0].embedding - row[:2]).norm(dim=1).argmin()) for row in z_cf[0]]
    # candidates: label 1's fonts 1 (own, skipped) and 2, then label 0's fonts 0 and 3; font 0 flips
    assert fonts[0] == 0 and set(fonts[:3]) == {0, 2, 3} and fonts[3] == fonts[0]
    torch.testing.assert_close(z_cf[0, :, 2], torch.full((4,), 0.7))  # only the spurious group moves
    with pytest.raises(TypeError, match="oracle"):
        InformedSearch().explain(z, classifier, nn.Identity())


@pytest.mark.parametrize(
    ("factory", "kwargs", "match"),
    [
        (DiCE, {"proximity_weight": -1.0}, "proximity_weight"),
        (DiCE, {"margin": 0.0}, "margin"),
        (XGEM, {"k": 0}, "k"),
        (DiVE, {"masked": -1}, "masked"),
        (DiVE, {"sparsity_weight": "x"}, "sparsity"),
        (StylExAttFind, {"shift_size": 0.0}, "shift_size"),
        (InformedSearch, {"k": 1.5}, "k"),
    ],
)
def test_settings_are_validated(factory, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        factory(**kwargs)


def test_three_class_classifiers_are_refused_with_the_methods_name():
    three = nn.Linear(3, 3)
    for method, name in [(DiCE(), "DiCE"), (StylExAttFind(), "StylEx")]:
        with pytest.raises(ValueError, match=name):
            method.explain(torch.zeros(2, 3), three, nn.Identity())
