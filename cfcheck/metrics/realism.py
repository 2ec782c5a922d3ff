"""Realism metrics: do the counterfactuals look like real images (of the target class)?

FID (Heusel et al. 2017; Väth §3.3, Hvilshøj eq. 4) and KID (Bińkowski et al. 2018) on the
embeddings of a *domain* network — Hvilshøj §3.1 shows Inception V3 is a poor fit for
small images and uses the explained architecture's last hidden layer instead. These are
set-level scores (one number per pair of sets); their uncertainty comes from
:func:`cfcheck.metrics.set_intervals.bootstrap_set_ci`, which is why :func:`fid` and :func:`kid`
take plain feature matrices and are cheap enough to call a thousand times. KID on all pairs of
two sets of any sizes, and both statistics over many resamples at once, are in
:mod:`cfcheck.metrics.set_statistics`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

import numpy as np
import torch
from torch import Tensor, nn

from cfcheck.metrics._validation import (
    as_float64_matrix,
    check_float_tensor,
    check_positive_int,
    check_range,
    check_real,
    describe,
)

if TYPE_CHECKING:
    from torchmetrics import Metric

__all__ = [
    "RealSideTerms",
    "compute_real_side",
    "fid",
    "fid_torchmetrics",
    "frechet_distance",
    "kid",
    "kid_torchmetrics",
]

ArrayLike = Tensor | np.ndarray

#: How a set engine (:mod:`cfcheck.metrics.set_statistics`, :class:`cfcheck.metrics.manifold.KnnSets`)
#: gets a term of its resamples that depends on the real rows alone: called with the term's name,
#: the R×m real row indices of the resamples and a function computing the term. Set CIs draw the
#: real rows from the seed and the reference's size alone, so these terms are the same whatever the
#: method; :func:`cfcheck.metrics.reference_store.stored_engine` keeps them with the derived data.
RealSideTerms = Callable[[str, np.ndarray, Callable[[], Tensor]], Tensor]


def compute_real_side(term: str, real_index: np.ndarray, compute: Callable[[], Tensor]) -> Tensor:
    """The engines' default :data:`RealSideTerms`: computes the term, keeps nothing.

    Example:
        >>> compute_real_side("doc", np.zeros((1, 2), dtype=np.int64), lambda: torch.ones(1)).tolist()
        [1.0]
    """
    return compute()


_DEFAULT_KID_SUBSET_SIZE = 1000


def _as_float64(name: str, value: object, ndim: int) -> Tensor:
    if isinstance(value, np.ndarray):
        tensor = torch.from_numpy(np.asarray(value, dtype=np.float64))
    elif isinstance(value, Tensor) and not value.is_complex() and value.dtype != torch.bool:
        tensor = value.detach().to(device="cpu", dtype=torch.float64)
    else:
        raise TypeError(f"`{name}` must be a real torch.Tensor or numpy.ndarray, got {describe(value)}")
    if tensor.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-D, got shape {tuple(tensor.shape)}")
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"`{name}` contains NaN or infinite values")
    return tensor


def _check_covariance(name: str, sigma: Tensor, dim: int) -> Tensor:
    if sigma.shape != (dim, dim):
        raise ValueError(f"`{name}` must be {dim}×{dim} to match the mean, got shape {tuple(sigma.shape)}")
    scale = max(float(sigma.abs().max()), 1e-300)
    if float((sigma - sigma.T).abs().max()) > 1e-6 * scale:
        raise ValueError(f"`{name}` must be a symmetric covariance matrix")
    symmetric = _symmetric(sigma)
    lowest = float(torch.linalg.eigvalsh(symmetric)[0])
    if lowest < -1e-6 * scale:
        raise ValueError(f"`{name}` must be positive semi-definite, got an eigenvalue of {lowest:.4g}")
    return symmetric


def _symmetric(sigma: Tensor) -> Tensor:
    """The symmetric part of a covariance matrix (a product AᵀA need not be exactly symmetric
    in floating point)."""
    return 0.5 * (sigma + sigma.T)


def _sqrtm_psd(sigma: Tensor) -> Tensor:
    eigenvalues, eigenvectors = torch.linalg.eigh(sigma)
    return (eigenvectors * eigenvalues.clamp_min(0).sqrt()) @ eigenvectors.T


def frechet_distance(mu1: ArrayLike, sigma1: ArrayLike, mu2: ArrayLike, sigma2: ArrayLike) -> float:
    """Fréchet distance between N(mu1, sigma1) and N(mu2, sigma2), in float64.

    d² = ‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr (Σ₁^½ Σ₂ Σ₁^½)^½. The trace term uses the
    eigenvalues of the symmetric PSD matrix Σ₁^½ Σ₂ Σ₁^½ (same spectrum as Σ₁Σ₂), which
    stays real and stable for the singular covariances small sample sets produce, unlike
    a general ``sqrtm`` of the non-symmetric product. Rounding can push an exact zero
    slightly negative; the result is clamped at 0 because d² ≥ 0.
    """
    m1 = _as_float64("mu1", mu1, ndim=1)
    m2 = _as_float64("mu2", mu2, ndim=1)
    if m1.shape != m2.shape:
        raise ValueError(f"`mu1` and `mu2` must have the same length, got {m1.shape[0]} and {m2.shape[0]}")
    s1 = _check_covariance("sigma1", _as_float64("sigma1", sigma1, ndim=2), m1.shape[0])
    s2 = _check_covariance("sigma2", _as_float64("sigma2", sigma2, ndim=2), m1.shape[0])
    return _frechet_checked(m1, s1, _sqrtm_psd(s1), m2, s2)


def _frechet_checked(m1: Tensor, s1: Tensor, root1: Tensor, m2: Tensor, s2: Tensor) -> float:
    """:func:`frechet_distance` of validated float64 moments, given root1 = Σ₁^½ (a set engine
    computes a reference's root once for all the sets it scores)."""
    inner = root1 @ s2 @ root1
    inner = 0.5 * (inner + inner.T)
    trace_sqrt = torch.linalg.eigvalsh(inner).clamp_min(0).sqrt().sum()
    value = (m1 - m2).pow(2).sum() + torch.trace(s1) + torch.trace(s2) - 2 * trace_sqrt
    return max(float(value), 0.0)


def _mean_and_covariance(features: Tensor) -> tuple[Tensor, Tensor]:
    mean = features.mean(dim=0)
    centred = features - mean
    covariance = centred.T @ centred / (features.shape[0] - 1)  # unbiased, as torchmetrics
    return mean, covariance


def _check_feature_pair(real_features: object, fake_features: object) -> tuple[Tensor, Tensor]:
    real = as_float64_matrix("real_features", real_features, min_rows=2)
    fake = as_float64_matrix("fake_features", fake_features, min_rows=2)
    if real.shape[1] != fake.shape[1]:
        raise ValueError(
            f"`real_features` and `fake_features` must have the same feature dimension, "
            f"got {real.shape[1]} and {fake.shape[1]}"
        )
    return real, fake


def fid(real_features: ArrayLike, fake_features: ArrayLike) -> float:
    """FID between two sets of embeddings (rows = samples, N ≥ 2 each, same width D)."""
    real, fake = _check_feature_pair(real_features, fake_features)
    mu_r, sigma_r = _mean_and_covariance(real)
    mu_f, sigma_f = _mean_and_covariance(fake)
    return frechet_distance(mu_r, sigma_r, mu_f, sigma_f)


def _poly_mmd2(x: Tensor, y: Tensor, degree: int, gamma: float, coef: float) -> Tensor:
    """Unbiased MMD² with the polynomial kernel k(a, b) = (γ aᵀb + coef)^degree."""
    m = x.shape[0]
    k_xx = (x @ x.T * gamma + coef) ** degree
    k_yy = (y @ y.T * gamma + coef) ** degree
    k_xy = (x @ y.T * gamma + coef) ** degree
    within = (k_xx.sum() - k_xx.diagonal().sum() + k_yy.sum() - k_yy.diagonal().sum()) / (m * (m - 1))
    return within - 2 * k_xy.sum() / (m * m)


def _check_kid_options(
    n_real: int, n_fake: int, subsets: object, subset_size: object, degree: object, gamma: object, coef: object
) -> tuple[int, int, int, float | None, float]:
    n_subsets = check_positive_int("subsets", subsets)
    if subset_size is None:
        size = min(_DEFAULT_KID_SUBSET_SIZE, n_real, n_fake)
    else:
        size = check_positive_int("subset_size", subset_size, minimum=2)
        if size > min(n_real, n_fake):
            raise ValueError(f"`subset_size`={size} exceeds the number of samples (real {n_real}, fake {n_fake})")
    deg = check_positive_int("degree", degree)
    gam = None if gamma is None else check_real("gamma", gamma)
    if gam is not None and gam <= 0:
        raise ValueError(f"`gamma` must be None or > 0, got {gam}")
    cf = check_real("coef", coef)
    if cf <= 0:
        raise ValueError(f"`coef` must be > 0, got {cf}")
    return n_subsets, size, deg, gam, cf


def kid(
    real_features: ArrayLike,
    fake_features: ArrayLike,
    subsets: int = 100,
    subset_size: int | None = None,
    degree: int = 3,
    gamma: float | None = None,
    coef: float = 1.0,
    seed: int = 0,
) -> tuple[float, float]:
    """KID: unbiased polynomial-kernel MMD² averaged over random subsets, as torchmetrics.

    Each of ``subsets`` rounds draws ``subset_size`` rows without replacement from each
    set (default ``min(1000, n_real, n_fake)``); γ defaults to 1/D. Returns the mean and
    the population standard deviation over rounds. Subsets are drawn from a
    ``torch.Generator`` seeded with ``seed`` in the same order torchmetrics draws them, so
    :func:`kid_torchmetrics` with the same seed sees the same subsets. Unbiased, so it can
    be slightly negative when the sets come from one distribution.
    """
    real, fake = _check_feature_pair(real_features, fake_features)
    n_subsets, size, deg, gam, cf = _check_kid_options(
        real.shape[0], fake.shape[0], subsets, subset_size, degree, gamma, coef
    )
    gam = 1.0 / real.shape[1] if gam is None else gam
    generator = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    scores = torch.empty(n_subsets, dtype=torch.float64)
    for i in range(n_subsets):
        real_idx = torch.randperm(real.shape[0], generator=generator)[:size]
        fake_idx = torch.randperm(fake.shape[0], generator=generator)[:size]
        scores[i] = _poly_mmd2(real[real_idx], fake[fake_idx], deg, gam, cf)
    return float(scores.mean()), float(scores.std(unbiased=False))


# --------------------------------------------------------------------------- torchmetrics


def _check_image_sets(real_images: object, fake_images: object) -> tuple[Tensor, Tensor]:
    real = check_float_tensor("real_images", real_images, ndim=4)
    fake = check_float_tensor("fake_images", fake_images, ndim=4)
    if real.shape[1:] != fake.shape[1:]:
        raise ValueError(
            f"`real_images` and `fake_images` must share C×H×W, got {tuple(real.shape[1:])} and {tuple(fake.shape[1:])}"
        )
    for name, images in (("real_images", real), ("fake_images", fake)):
        if images.shape[0] < 2:
            raise ValueError(f"`{name}` needs at least 2 images, got {images.shape[0]}")
        check_range(name, images, (0.0, 1.0))
    return real, fake


def _check_feature_module(feature: object) -> nn.Module:
    if not isinstance(feature, nn.Module):
        raise TypeError(f"`feature` must be a torch.nn.Module returning N×D embeddings, got {describe(feature)}")
    return feature


@contextlib.contextmanager
def _evaluating(module: nn.Module) -> Iterator[None]:
    """Eval mode and no autograd for the duration, restoring the caller's training flag."""
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        module.train(was_training)


def _feed(metric: Metric, real: Tensor, fake: Tensor, batch_size: int) -> None:
    for images, is_real in ((real, True), (fake, False)):
        for start in range(0, images.shape[0], batch_size):
            metric.update(images[start : start + batch_size], real=is_real)


def fid_torchmetrics(real_images: Tensor, fake_images: Tensor, feature: nn.Module, *, batch_size: int = 500) -> float:
    """FID through ``torchmetrics.image.fid.FrechetInceptionDistance`` with a custom feature module.

    With a custom ``nn.Module`` torchmetrics passes the images to it unchanged (its
    ``normalize=True`` → uint8 conversion applies only to its own Inception), so the
    module receives float images in [0, 1] with their own channel count (1 for grey images).
    ``feature`` should expose ``num_features``; otherwise torchmetrics probes it with a
    random CPU image shaped like ``real_images[0]``. Returns torchmetrics' float32 result.
    """
    from torchmetrics.image.fid import FrechetInceptionDistance

    module = _check_feature_module(feature)
    real, fake = _check_image_sets(real_images, fake_images)
    size = check_positive_int("batch_size", batch_size)
    with _evaluating(module):
        metric = FrechetInceptionDistance(
            feature=module,
            normalize=True,
            input_img_size=cast(tuple[int, int, int], tuple(real.shape[1:])),  # C×H×W: the images are checked 4-D
        ).to(real.device)
        _feed(metric, real, fake, size)
        return float(metric.compute())


def kid_torchmetrics(
    real_images: Tensor,
    fake_images: Tensor,
    feature: nn.Module,
    *,
    subsets: int = 100,
    subset_size: int | None = None,
    degree: int = 3,
    gamma: float | None = None,
    coef: float = 1.0,
    seed: int = 0,
    batch_size: int = 500,
) -> tuple[float, float]:
    """KID through ``torchmetrics.image.kid.KernelInceptionDistance`` with a custom feature module.

    torchmetrics draws subsets from the global RNG; it is seeded with ``seed`` inside a
    forked RNG state, so the caller's random stream is untouched and the subsets match
    :func:`kid` on the module's embeddings.
    """
    from torchmetrics.image.kid import KernelInceptionDistance

    module = _check_feature_module(feature)
    real, fake = _check_image_sets(real_images, fake_images)
    n_subsets, size, deg, gam, cf = _check_kid_options(
        real.shape[0], fake.shape[0], subsets, subset_size, degree, gamma, coef
    )
    rng_seed = check_positive_int("seed", seed, minimum=0)
    with _evaluating(module), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*will save all extracted features.*")
        metric = KernelInceptionDistance(
            feature=module, subsets=n_subsets, subset_size=size, degree=deg, gamma=gam, coef=cf, normalize=True
        ).to(real.device)
        _feed(metric, real, fake, check_positive_int("batch_size", batch_size))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(rng_seed)
            mean, std = metric.compute()
    return float(mean), float(std)
