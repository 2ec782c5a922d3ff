"""DVCE: the cone projection against a numerical projection, and the method's contract and
switches on a tiny (untrained) denoiser."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from cfcheck.kinds.vce.methods.dvce import DiffusionCounterfactual, cone_projection
from cfcheck.models.generative.diffusion import DenoisingUNet


def _numerical_cone_projection(v: np.ndarray, axis: np.ndarray, alpha: float) -> np.ndarray:
    """argmin ‖p − v‖² s.t. p·u ≥ cos α·‖p‖ (the convex cone), by SLSQP from several starts."""
    u = axis / np.linalg.norm(axis)
    constraint = {"type": "ineq", "fun": lambda p: p @ u - math.cos(alpha) * math.sqrt(p @ p + 1e-18)}
    best = None
    for start in (u * max(v @ u, 1e-3), v, u, np.zeros_like(v) + 1e-3 * u):
        result = minimize(
            lambda p: ((p - v) ** 2).sum(),
            start,
            constraints=[constraint],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        if best is None or result.fun < best.fun:
            best = result
    return best.x


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("angle", [10.0, 30.0, 60.0])
def test_cone_projection_matches_a_numerical_projection(seed, angle):
    rng = np.random.default_rng(seed)
    dim = 2 + seed % 4
    v, axis = rng.normal(size=dim), rng.normal(size=dim)
    expected = _numerical_cone_projection(v, axis, math.radians(angle))
    got = cone_projection(torch.tensor(v)[None], torch.tensor(axis)[None], angle)[0].numpy()
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_cone_projection_closed_cases():
    axis = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    v = torch.tensor([[2.0, 0.5], [0.0, 1.0], [-1.0, 0.1], [1.0, 1.0]])
    out = cone_projection(v, axis, 30.0)
    torch.testing.assert_close(out[0], v[0])  # 14° inside the cone: unchanged
    # 90° from the axis: length cos(60°) on the 30° ray
    torch.testing.assert_close(out[1], 0.5 * torch.tensor([math.cos(math.pi / 6), math.sin(math.pi / 6)]))
    torch.testing.assert_close(out[2], torch.zeros(2))  # beyond 120°: the apex
    torch.testing.assert_close(out[3], torch.zeros(2))  # no axis, no cone


vectors = st.lists(st.floats(-10, 10, allow_nan=False), min_size=6, max_size=6)


@settings(max_examples=60, deadline=None)
@given(vectors, vectors, st.floats(5.0, 85.0))
def test_cone_projection_properties(v, axis, angle):
    v, axis = torch.tensor([v], dtype=torch.float64), torch.tensor([axis], dtype=torch.float64)
    if float(axis.norm()) < 1e-3:
        return
    p = cone_projection(v, axis, angle)
    assert float(p.norm()) <= float(v.norm()) + 1e-9  # a projection onto a cone never lengthens
    if float(p.norm()) > 1e-9:  # inside the cone
        cos = float((p * axis).sum() / (p.norm() * axis.norm()))
        assert cos >= math.cos(math.radians(angle)) - 1e-9
    torch.testing.assert_close(cone_projection(p, axis, angle), p)  # idempotent
    assert float(((v - p) * p).sum()) == pytest.approx(
        0.0, abs=1e-7 * (1 + float(v.norm()) ** 2)
    )  # orthogonal residual


@pytest.fixture(scope="module")
def denoiser() -> DenoisingUNet:
    torch.manual_seed(0)
    net = DenoisingUNet(block_out_channels=(8, 8), norm_num_groups=4).eval()
    return net.requires_grad_(False)


def test_dvce_contract_and_switches(toys, denoiser):
    classifier, robust = toys.small_cnn(1), toys.small_cnn(2)
    x = toys.random_images(6, seed=3)
    target = toys.other_targets(classifier(x).argmax(1), seed=4)
    method = DiffusionCounterfactual(denoiser, robust, num_steps=6, batch_size=4)
    cf, valid = method.explain(x, target, classifier, generator=torch.Generator().manual_seed(0))
    assert cf.shape == x.shape and cf.dtype == torch.float32 and float(cf.min()) >= 0 and float(cf.max()) <= 1
    torch.testing.assert_close(valid, classifier(cf).argmax(1) == target)  # the rejection step
    again, _ = method.explain(x, target, classifier, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(cf, again)
    other, _ = method.explain(x, target, classifier, generator=torch.Generator().manual_seed(1))
    assert not torch.equal(cf, other)
    for switches in (
        {"x0_prediction": False},
        {"cone_projection": False},
        {"distance_weight": 0.0},
        {"rejection": False},
    ):
        variant = DiffusionCounterfactual(denoiser, robust, num_steps=6, **switches)
        out, kept = variant.explain(x, target, classifier, generator=torch.Generator().manual_seed(0))
        assert out.shape == x.shape
        if switches == {"rejection": False}:
            assert bool(kept.all())
    several = DiffusionCounterfactual(denoiser, robust, num_steps=4, num_counterfactuals=3)
    cfs, kept = several.explain(x, target, classifier)
    assert cfs.shape == (6, 3, 1, 32, 32) and kept.shape == (6,)
    assert not torch.equal(cfs[:, 0], cfs[:, 1])
    assert all(p.grad is None for p in classifier.parameters())


def test_guidance_moves_towards_the_target(toys, denoiser):
    """On a linear classifier, the guided result scores the target higher than unguided denoising."""
    classifier = toys.linear_classifier(seed=5, scale=0.2)
    x = toys.random_images(8, seed=6)
    target = toys.other_targets(classifier(x).argmax(1), seed=7)
    kwargs = dict(num_steps=10, start_fraction=0.6, cone_projection=False, distance_weight=0.0, rejection=False)
    guided, _ = DiffusionCounterfactual(denoiser, guidance_scale=0.5, **kwargs).explain(x, target, classifier)
    weak, _ = DiffusionCounterfactual(denoiser, guidance_scale=1e-6, **kwargs).explain(x, target, classifier)
    log_p = lambda images: classifier(images).log_softmax(1).gather(1, target[:, None]).mean()  # noqa: E731
    assert float(log_p(guided)) > float(log_p(weak)) + 0.5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"robust_classifier": None}, "cone_projection needs a `robust_classifier`"),
        ({"start_fraction": 0.0}, "start_fraction"),
        ({"cone_angle": 90.0}, "cone_angle"),
        ({"distance_weight": -1.0}, "distance_weight"),
        ({"num_steps": 0}, "num_steps"),
    ],
)
def test_dvce_settings_are_validated(toys, denoiser, kwargs, match):
    settings_ = {"robust_classifier": toys.small_cnn(0), **kwargs}
    with pytest.raises(ValueError, match=match):
        DiffusionCounterfactual(denoiser, **settings_)
