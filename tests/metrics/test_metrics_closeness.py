"""Closeness metrics against numpy norms, a numpy LPIPS-formula reimplementation and properties."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cfcheck.metrics import closeness
from cfcheck.metrics._optional import OptionalDependencyError
from cfcheck.metrics.closeness import (
    elastic_net_distance,
    lpips_distance,
    minkowski_distance,
    perceptual_distance,
)

ORDERS = [1.0, 1.5, 2.0, 3.0, math.inf]


def _images(seed: int, n: int = 6, shape: tuple[int, ...] = (1, 8, 8)) -> torch.Tensor:
    return torch.rand((n, *shape), generator=torch.Generator().manual_seed(seed))


class _TinyFeatures:
    """Deterministic two-layer conv feature extractor (random but fixed weights)."""

    def __init__(self) -> None:
        torch.manual_seed(0)
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 6, 3, stride=2, padding=1)

    def __call__(self, x: torch.Tensor) -> list[torch.Tensor]:
        with torch.no_grad():
            h1 = torch.relu(self.conv1(x))
            h2 = torch.relu(self.conv2(h1))
        return [h1, h2]


FEATURES = _TinyFeatures()


def _numpy_perceptual(fx: list[np.ndarray], fc: list[np.ndarray], eps: float = 1e-10) -> np.ndarray:
    total = np.zeros(fx[0].shape[0])
    for a, b in zip(fx, fc):
        for i in range(a.shape[0]):
            layer_sum = 0.0
            _, height, width = a[i].shape
            for h in range(height):
                for w in range(width):
                    va, vb = a[i, :, h, w], b[i, :, h, w]
                    ua = va / (np.sqrt((va**2).sum()) + eps)
                    ub = vb / (np.sqrt((vb**2).sum()) + eps)
                    layer_sum += ((ua - ub) ** 2).sum()
            total[i] += layer_sum / (height * width)
    return total


@pytest.mark.parametrize("p", ORDERS)
def test_minkowski_matches_numpy_norm(p: float) -> None:
    x, c = _images(0), _images(1)
    delta = (x - c).double().flatten(start_dim=1).numpy()
    expected = [np.linalg.norm(row, ord=p) for row in delta]
    result = minkowski_distance(x, c, p)
    assert result.dtype == torch.float32 and result.shape == (6,)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_distances_are_per_image_not_per_batch() -> None:
    x, c = _images(2), _images(3)
    batched = minkowski_distance(x, c, 2)
    single = torch.cat([minkowski_distance(x[i : i + 1], c[i : i + 1], 2) for i in range(6)])
    torch.testing.assert_close(batched, single)


def test_elastic_net_is_l1_plus_l2() -> None:
    x, c = _images(4), _images(5)
    delta = (x - c).double().flatten(start_dim=1).numpy()
    expected = np.abs(delta).sum(axis=1) + np.sqrt((delta**2).sum(axis=1))
    np.testing.assert_allclose(elastic_net_distance(x, c).numpy(), expected, rtol=1e-6)
    torch.testing.assert_close(elastic_net_distance(x, c), minkowski_distance(x, c, 1) + minkowski_distance(x, c, 2))


unit_images = arrays(np.float32, (3, 1, 4, 4), elements=st.floats(0.0, 1.0, width=32))


@settings(max_examples=50, deadline=None)
@given(a=unit_images, b=unit_images, c=unit_images, p=st.sampled_from(ORDERS))
def test_minkowski_metric_axioms(a, b, c, p) -> None:
    x, y, z = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
    assert minkowski_distance(x, x, p).abs().max().item() == 0.0
    torch.testing.assert_close(minkowski_distance(x, y, p), minkowski_distance(y, x, p))
    d_xz, d_xy, d_yz = minkowski_distance(x, z, p), minkowski_distance(x, y, p), minkowski_distance(y, z, p)
    assert bool((d_xz <= d_xy + d_yz + 1e-5).all())


@settings(max_examples=50, deadline=None)
@given(
    delta=arrays(np.float32, (2, 1, 4, 4), elements=st.floats(-1.0, 1.0, width=32)),
    scale=st.floats(-10.0, 10.0),
    p=st.sampled_from(ORDERS),
)
def test_minkowski_absolute_homogeneity(delta, scale, p) -> None:
    zero = torch.zeros(2, 1, 4, 4)
    d = torch.from_numpy(delta)
    scaled = minkowski_distance(zero, scale * d, p, value_range=None)
    torch.testing.assert_close(
        scaled, abs(scale) * minkowski_distance(zero, d, p, value_range=None), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    ("x", "c", "p", "error", "match"),
    [
        (torch.zeros(2, 1, 4, 4), torch.zeros(2, 1, 4, 4), 0.5, ValueError, "p` must be >= 1"),
        (torch.zeros(2, 1, 4, 4), torch.zeros(3, 1, 4, 4), 2, ValueError, "same shape"),
        (torch.zeros(2, 1, 4, 4), torch.full((2, 1, 4, 4), 1.5), 2, ValueError, r"\[0.0, 1.0\]"),
        (torch.zeros(2, 1, 4, 4), torch.full((2, 1, 4, 4), float("nan")), 2, ValueError, "NaN"),
        (torch.zeros(2, 1, 4, 4, dtype=torch.int64), torch.zeros(2, 1, 4, 4), 2, TypeError, "floating"),
        (torch.zeros(4), torch.zeros(4), 2, ValueError, "at least 2 dimensions"),
        (torch.zeros(2, 1, 4, 4), torch.zeros(2, 1, 4, 4), "2", TypeError, "real number"),
        (np.zeros((2, 1, 4, 4)), torch.zeros(2, 1, 4, 4), 2, TypeError, "torch.Tensor"),
    ],
)
def test_minkowski_validation(x, c, p, error, match) -> None:
    with pytest.raises(error, match=match):
        minkowski_distance(x, c, p)


def test_perceptual_matches_numpy_reimplementation() -> None:
    x, c = _images(6), _images(7)
    fx = [f.double().numpy() for f in FEATURES(x)]
    fc = [f.double().numpy() for f in FEATURES(c)]
    result = perceptual_distance(x, c, FEATURES)
    assert result.dtype == torch.float32 and result.shape == (6,)
    np.testing.assert_allclose(result.numpy(), _numpy_perceptual(fx, fc), rtol=1e-5)


def test_perceptual_in_chunks_matches_numpy_and_keeps_gradients(monkeypatch) -> None:
    monkeypatch.setattr(closeness, "PERCEPTUAL_CHUNK", 4)  # 11 images: chunks of 4, 4 and 3
    x, c = _images(1, n=11), _images(2, n=11)
    expected = _numpy_perceptual([f.double().numpy() for f in FEATURES(x)], [f.double().numpy() for f in FEATURES(c)])
    result = perceptual_distance(x, c, FEATURES)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5)
    c.requires_grad_(True)  # a differentiable feature network: the chunks keep the graph
    with_grad = perceptual_distance(x, c, lambda a: [torch.relu(FEATURES.conv1(a))])
    with_grad.sum().backward()
    assert c.grad is not None and c.grad.shape == c.shape and bool(c.grad.abs().sum() > 0)


@settings(max_examples=30, deadline=None)
@given(a=unit_images, b=unit_images)
def test_perceptual_identity_symmetry_nonnegativity(a, b) -> None:
    x, c = torch.from_numpy(a), torch.from_numpy(b)
    assert perceptual_distance(x, x, FEATURES).abs().max().item() == 0.0
    forward = perceptual_distance(x, c, FEATURES)
    torch.testing.assert_close(forward, perceptual_distance(c, x, FEATURES))
    assert bool((forward >= 0).all()) and bool((forward <= 4 * 2).all())


def test_perceptual_invariant_to_positive_rescaling_of_each_position() -> None:
    """Unit normalisation removes any positive factor shared by the channels of a position.

    The factors may differ per layer, image, position and between x and c; a factor that
    differs between channels would change the direction of the vector and is not removed.
    """
    x, c = _images(8), _images(9)
    gen = torch.Generator().manual_seed(3)

    def rescaled(images: torch.Tensor) -> list[torch.Tensor]:
        return [f * (0.01 + 100 * torch.rand(f.shape[0], 1, *f.shape[2:], generator=gen)) for f in FEATURES(images)]

    torch.testing.assert_close(
        perceptual_distance(x, c, rescaled), perceptual_distance(x, c, FEATURES), rtol=1e-4, atol=1e-6
    )


def test_perceptual_zero_activations_are_finite() -> None:
    x, c = _images(10), _images(11)

    def dead(images: torch.Tensor) -> list[torch.Tensor]:
        maps = FEATURES(images)
        maps[0] = torch.zeros_like(maps[0])
        return maps

    result = perceptual_distance(x, c, dead)
    assert bool(torch.isfinite(result).all())
    second_layer_only = perceptual_distance(x, c, lambda im: FEATURES(im)[1:])
    torch.testing.assert_close(result, second_layer_only)


@pytest.mark.parametrize(
    ("feature_maps", "error", "match"),
    [
        ("net", TypeError, "callable"),
        (lambda im: FEATURES(im)[0], TypeError, "non-empty list"),
        (lambda im: [], TypeError, "non-empty list"),
        (lambda im: [FEATURES(im)[0][:1]], ValueError, "batch size"),
        (lambda im: [FEATURES(im)[0].flatten(2)], ValueError, "4-D"),
        (lambda im: [FEATURES(im)[0].long()], TypeError, "floating point"),
        (lambda im: [FEATURES(im)[0] * float("inf")], ValueError, "NaN or infinite"),
        (lambda im: [FEATURES(im)[0], torch.full((6, 2, 1, 1), float("nan"))], ValueError, "layer 1"),
    ],
)
def test_perceptual_validation(feature_maps, error, match) -> None:
    with pytest.raises(error, match=match):
        perceptual_distance(_images(0), _images(1), feature_maps)


def test_lpips_without_backend_raises_optional_dependency_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "lpips", None)  # makes `import lpips` fail even if installed
    closeness._lpips_model.cache_clear()
    try:
        with pytest.raises(OptionalDependencyError, match=r'pip install "cfcheck\[lpips\]"') as info:
            lpips_distance(_images(0), _images(1))
    finally:
        closeness._lpips_model.cache_clear()
    assert isinstance(info.value, ImportError)
    assert "torchvision" in str(info.value) and "torch build" in str(info.value)


def test_lpips_validates_before_loading() -> None:
    with pytest.raises(ValueError, match="net"):
        lpips_distance(_images(0), _images(1), net="resnet")
    with pytest.raises(ValueError, match="N×1×H×W or N×3×H×W"):
        lpips_distance(_images(0, shape=(2, 8, 8)), _images(1, shape=(2, 8, 8)))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(0, 12), attributes=st.integers(1, 4))
def test_attribute_changes_counts_flips_like_a_loop(data, n, attributes) -> None:
    labels = st.lists(st.integers(0, 3), min_size=n, max_size=n)
    before = [data.draw(labels) for _ in range(attributes)]
    after = [data.draw(labels) for _ in range(attributes)]
    result = closeness.attribute_changes(
        [torch.tensor(b, dtype=torch.int64) for b in before], [torch.tensor(a, dtype=torch.int64) for a in after]
    )
    expected = [sum(before[a][i] != after[a][i] for a in range(attributes)) for i in range(n)]
    assert result.dtype == torch.float32 and result.tolist() == expected


@pytest.mark.parametrize(
    ("before", "after", "error", "match"),
    [
        ([], [], ValueError, "at least one"),
        ([torch.zeros(3, dtype=torch.int64)], [], ValueError, "same attributes"),
        ([torch.zeros(3)], [torch.zeros(3)], TypeError, "integer labels"),
        ([torch.zeros(3, 1, dtype=torch.int64)], [torch.zeros(3, 1, dtype=torch.int64)], ValueError, "1-D"),
        ([torch.zeros(3, dtype=torch.int64)], [torch.zeros(2, dtype=torch.int64)], ValueError, "common length"),
        (
            [torch.zeros(3, dtype=torch.int64), torch.zeros(2, dtype=torch.int64)],
            [torch.zeros(3, dtype=torch.int64), torch.zeros(2, dtype=torch.int64)],
            ValueError,
            "common length",
        ),
    ],
)
def test_attribute_changes_validation(before, after, error, match) -> None:
    with pytest.raises(error, match=match):
        closeness.attribute_changes(before, after)


@settings(max_examples=30, deadline=None)
@given(a=unit_images, b=unit_images)
def test_ground_truth_error_is_the_mean_absolute_difference(a, b) -> None:
    expected = np.abs(a.astype(np.float64) - b.astype(np.float64)).reshape(len(a), -1).mean(axis=1)
    result = closeness.ground_truth_error(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_ground_truth_relative_error_against_a_loop_and_its_fixed_points() -> None:
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.random((6, 1, 4, 4))).float()
    truth = torch.from_numpy(rng.random((6, 1, 4, 4))).float()
    c = torch.from_numpy(rng.random((6, 1, 4, 4))).float()
    got = closeness.ground_truth_relative_error(c, truth, x).numpy()
    for i in range(6):  # an independent loop over pixels in float64
        num = sum(abs(float(a) - float(b)) for a, b in zip(c[i].flatten(), truth[i].flatten()))
        den = sum(abs(float(a) - float(b)) for a, b in zip(x[i].flatten(), truth[i].flatten()))
        assert got[i] == pytest.approx(num / den, rel=1e-5)
    assert closeness.ground_truth_relative_error(truth, truth, x).abs().max() == 0  # the truth: 0
    assert torch.allclose(closeness.ground_truth_relative_error(x, truth, x), torch.ones(6))  # the input: 1
    # nothing to move: undefined
    assert torch.isnan(closeness.ground_truth_relative_error(c, x, x)).all()
    with pytest.raises(ValueError, match="inputs"):
        closeness.ground_truth_relative_error(c, truth, x[:3])
    with pytest.raises(ValueError):
        closeness.ground_truth_relative_error(c * 2, truth, x)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_ground_truth_relative_error_of_a_truth_mixture_is_one_minus_its_share(n, seed) -> None:
    """The truth for some inputs, the input for the others: the mean is the share of inputs left unchanged."""
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.random((n, 1, 3, 3))).float()
    truth = torch.from_numpy(rng.random((n, 1, 3, 3))).float()
    right = torch.from_numpy(rng.random(n) < rng.random())
    mixture = torch.where(right[:, None, None, None], truth, x)
    relative = closeness.ground_truth_relative_error(mixture, truth, x)
    assert float(relative.double().mean()) == pytest.approx(1.0 - float(right.double().mean()), abs=1e-6)
