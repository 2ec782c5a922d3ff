"""FID and KID against scipy's closed form, analytic Gaussians, an explicit MMD loop and torchmetrics."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from torch import nn

from cfcheck.metrics.realism import fid, fid_torchmetrics, frechet_distance, kid, kid_torchmetrics


def _spd(rng: np.random.Generator, dim: int) -> np.ndarray:
    a = rng.normal(size=(dim, dim))
    return a @ a.T / dim + 0.1 * np.eye(dim)


def _scipy_frechet(mu1, s1, mu2, s2) -> float:
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean.real))


class _TinyEmbedding(nn.Module):
    """Small conv embedding for 1-channel images, with dropout to prove eval mode is used."""

    def __init__(self, with_num_features: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.dropout = nn.Dropout(0.5)
        if with_num_features:
            self.num_features = 32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.body(x))


def _image_sets() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    real = torch.rand(120, 1, 8, 8, generator=gen)
    fake = torch.rand(90, 1, 8, 8, generator=gen) ** 2
    return real, fake


@pytest.mark.parametrize("dim", [1, 3, 16])
def test_frechet_matches_scipy_sqrtm(dim: int) -> None:
    rng = np.random.default_rng(dim)
    mu1, mu2 = rng.normal(size=dim), rng.normal(size=dim)
    s1, s2 = _spd(rng, dim), _spd(rng, dim)
    assert frechet_distance(mu1, s1, mu2, s2) == pytest.approx(_scipy_frechet(mu1, s1, mu2, s2), rel=1e-8, abs=1e-10)
    # Tensors are accepted too.
    as_tensors = [torch.from_numpy(a) for a in (mu1, s1, mu2, s2)]
    assert frechet_distance(*as_tensors) == pytest.approx(frechet_distance(mu1, s1, mu2, s2))


def test_frechet_analytic_gaussians() -> None:
    # 1-D: (m1 − m2)² + (s1 − s2)² for standard deviations s1, s2.
    value = frechet_distance(np.array([1.0]), np.array([[4.0]]), np.array([-2.0]), np.array([[9.0]]))
    assert value == pytest.approx(9.0 + 1.0)
    # Diagonal: the same, summed over coordinates.
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    sd1, sd2 = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0])
    expected = ((mu1 - mu2) ** 2).sum() + ((sd1 - sd2) ** 2).sum()
    assert frechet_distance(mu1, np.diag(sd1**2), mu2, np.diag(sd2**2)) == pytest.approx(expected)


def test_fid_of_a_set_with_itself_is_zero_even_when_singular() -> None:
    features = np.random.default_rng(0).normal(size=(10, 32))  # n < d: singular covariance
    assert fid(features, features) == pytest.approx(0.0, abs=1e-8)


def test_fid_uses_sample_mean_and_unbiased_covariance() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(200, 5)), rng.normal(1.0, 2.0, size=(150, 5))
    expected = _scipy_frechet(a.mean(0), np.cov(a, rowvar=False), b.mean(0), np.cov(b, rowvar=False))
    assert fid(a, b) == pytest.approx(expected, rel=1e-8)
    assert fid(torch.from_numpy(a).float(), torch.from_numpy(b).float()) == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((np.zeros(3), np.eye(3), np.zeros(2), np.eye(2)), ValueError, "same length"),
        ((np.zeros(3), np.eye(2), np.zeros(3), np.eye(3)), ValueError, "3×3"),
        ((np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]]), np.zeros(2), np.eye(2)), ValueError, "symmetric"),
        ((np.zeros(2), np.diag([1.0, -1.0]), np.zeros(2), np.eye(2)), ValueError, "positive semi-definite"),
        ((np.zeros(2), np.eye(2) * np.nan, np.zeros(2), np.eye(2)), ValueError, "NaN"),
        (([0.0, 0.0], np.eye(2), np.zeros(2), np.eye(2)), TypeError, "numpy.ndarray"),
    ],
)
def test_frechet_validation(args, error, match) -> None:
    with pytest.raises(error, match=match):
        frechet_distance(*args)


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (np.zeros((1, 3)), np.zeros((5, 3)), "at least 2 rows"),
        (np.zeros((5, 3)), np.zeros((5, 4)), "same feature dimension"),
        (np.zeros(5), np.zeros((5, 3)), "2-D"),
    ],
)
def test_fid_validation(a, b, match) -> None:
    with pytest.raises(ValueError, match=match):
        fid(a, b)


def _mmd2_double_loop(x: np.ndarray, y: np.ndarray, degree: int, gamma: float, coef: float) -> float:
    def k(a, b):
        return (gamma * float(a @ b) + coef) ** degree

    m = len(x)
    xx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    xy = sum(k(x[i], y[j]) for i in range(m) for j in range(m)) / (m * m)
    return xx + yy - 2 * xy


@pytest.mark.parametrize(("degree", "gamma", "coef"), [(3, None, 1.0), (2, 0.5, 2.0)])
def test_kid_matches_explicit_mmd_loop(degree, gamma, coef) -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(25, 4)), rng.normal(0.5, 1.0, size=(25, 4))
    expected = _mmd2_double_loop(x, y, degree, 1 / 4 if gamma is None else gamma, coef)
    # A subset of all rows is a permutation, to which MMD² is invariant: every round agrees.
    mean, std = kid(x, y, subsets=3, subset_size=25, degree=degree, gamma=gamma, coef=coef)
    assert mean == pytest.approx(expected, rel=1e-10)
    assert std == pytest.approx(0.0, abs=1e-10)


def test_kid_subsets_match_the_loop_on_the_drawn_rows() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 3)), rng.normal(size=(40, 3))
    gen = torch.Generator().manual_seed(7)
    rounds = []
    for _ in range(4):
        xi = torch.randperm(30, generator=gen)[:10].numpy()
        yi = torch.randperm(40, generator=gen)[:10].numpy()
        rounds.append(_mmd2_double_loop(x[xi], y[yi], 3, 1 / 3, 1.0))
    mean, std = kid(x, y, subsets=4, subset_size=10, seed=7)
    assert mean == pytest.approx(np.mean(rounds), rel=1e-10)
    assert std == pytest.approx(np.std(rounds), rel=1e-8)


def test_kid_is_near_zero_for_one_distribution_and_deterministic() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(400, 8)), rng.normal(size=(400, 8))
    shifted = rng.normal(0.7, 1.0, size=(400, 8))
    same, _ = kid(a, b, subsets=30, subset_size=100)
    different, _ = kid(a, shifted, subsets=30, subset_size=100)
    assert abs(same) < 0.05 * different
    assert kid(a, b, subsets=5, subset_size=50, seed=1) == kid(a, b, subsets=5, subset_size=50, seed=1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"subset_size": 11}, "exceeds"),
        ({"subset_size": 1}, "subset_size"),
        ({"subsets": 0}, "subsets"),
        ({"degree": 0}, "degree"),
        ({"gamma": -1.0}, "gamma"),
        ({"coef": 0.0}, "coef"),
        ({"seed": -1}, "seed"),
    ],
)
def test_kid_validation(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        kid(np.zeros((10, 2)), np.zeros((12, 2)), **kwargs)


@pytest.mark.parametrize("with_num_features", [True, False])
def test_fid_torchmetrics_equals_ours_and_scipy(with_num_features: bool) -> None:
    module = _TinyEmbedding(with_num_features).train()
    real, fake = _image_sets()
    result = fid_torchmetrics(real, fake, module, batch_size=50)
    assert module.training  # the caller's mode is restored
    module.eval()
    with torch.no_grad():
        real_f, fake_f = module(real).double().numpy(), module(fake).double().numpy()
    ours = fid(real_f, fake_f)
    closed = _scipy_frechet(real_f.mean(0), np.cov(real_f, rowvar=False), fake_f.mean(0), np.cov(fake_f, rowvar=False))
    assert ours == pytest.approx(closed, rel=1e-6)
    assert result == pytest.approx(ours, rel=1e-4)


def test_kid_torchmetrics_equals_ours_with_the_same_seed() -> None:
    module = _TinyEmbedding()
    real, fake = _image_sets()
    state = torch.random.get_rng_state()
    result = kid_torchmetrics(real, fake, module, subsets=6, subset_size=40, seed=5)
    assert torch.equal(state, torch.random.get_rng_state())  # caller's RNG untouched
    with torch.no_grad():
        ours = kid(module.eval()(real), module(fake), subsets=6, subset_size=40, seed=5)
    # torchmetrics evaluates the kernels in the embeddings' float32; ours in float64.
    assert result == pytest.approx(ours, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize(
    ("real", "fake", "feature", "error", "match"),
    [
        (torch.rand(4, 1, 8, 8), torch.rand(4, 1, 8, 8), lambda x: x, TypeError, "nn.Module"),
        (torch.rand(4, 1, 8, 8), torch.rand(4, 1, 4, 4), _TinyEmbedding(), ValueError, "C×H×W"),
        (torch.rand(1, 1, 8, 8), torch.rand(4, 1, 8, 8), _TinyEmbedding(), ValueError, "at least 2"),
        (torch.rand(4, 1, 8, 8) * 255, torch.rand(4, 1, 8, 8), _TinyEmbedding(), ValueError, r"\[0.0, 1.0\]"),
        (torch.rand(4, 8, 8), torch.rand(4, 1, 8, 8), _TinyEmbedding(), ValueError, "4-D"),
    ],
)
def test_fid_torchmetrics_validation(real, fake, feature, error, match) -> None:
    with pytest.raises(error, match=match):
        fid_torchmetrics(real, fake, feature)
