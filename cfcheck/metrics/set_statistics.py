"""FID and all-pairs KID of one real set against several fake sets and against many resamples
of both, without gathering copies: what the realism scores, their real-vs-real floors and their
set-level CIs (:func:`cfcheck.metrics.set_intervals.bootstrap_set_ci`) need.

A resample of a set is a multiset of its rows, i.e. a row of counts w (R×N for R resamples).
FID needs the resample's mean and covariance: weighted sums. KID's unbiased estimator is
(wᵀKw − w·diag K)/(m(m−1)) within a set and wᵀK v/(m n) across sets (a duplicated row pairs
with its copy, as in the gathered set). Both are evaluated for all resamples at once; every
result equals the statistic of the gathered rows (the tests check it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import as_float64_matrix, check_positive_int, check_real
from cfcheck.metrics.manifold import knn_engine
from cfcheck.metrics.realism import (
    ArrayLike,
    RealSideTerms,
    _check_feature_pair,
    _frechet_checked,
    _mean_and_covariance,
    _sqrtm_psd,
    _symmetric,
    compute_real_side,
    fid,
)

__all__ = ["FidSets", "KidSets", "kid_all_pairs", "set_statistic_engine"]


def kid_all_pairs(
    real_features: ArrayLike, fake_features: ArrayLike, degree: int = 3, gamma: float | None = None, coef: float = 1.0
) -> float:
    """KID on all rows at once: the unbiased MMD² estimate with k(a, b) = (γ aᵀb + coef)^degree.

    Unlike :func:`kid` it needs no subsets and accepts sets of different sizes (N, M ≥ 2):
    ``Σ_{i≠j} k(r_i, r_j)/(N(N−1)) + Σ_{i≠j} k(f_i, f_j)/(M(M−1)) − 2 Σ_{i,j} k(r_i, f_j)/(NM)``.
    Meant for small per-class sets, where subsets would waste samples; γ defaults to 1/D.
    The kernel matrices are summed in blocks (:class:`KidSets`), so memory stays bounded.
    """
    real, fake = _check_feature_pair(real_features, fake_features)
    return KidSets(real, degree=degree, gamma=gamma, coef=coef)(fake)


_BLOCK_ENTRIES = 4_000_000  # entries of one kernel / outer-product block (32 MB in float64)


def _counts(index: np.ndarray, n: int) -> Tensor:
    """R×m row indices (with or without repeats) → R×n float64 counts."""
    rows = index.shape[0]
    flat = (np.asarray(index, dtype=np.int64) + n * np.arange(rows)[:, None]).ravel()
    return torch.from_numpy(np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64))


class KidSets:
    """KID (:func:`kid_all_pairs`) of one real set against fake sets and against resamples.

    The real set's within-set kernel sum is computed once, so scoring several fake sets (a
    counterfactual set and its real-vs-real floors) against one reference costs one pass
    over the reference's kernel matrix. Kernel matrices are never held whole.
    """

    def __init__(self, real: Tensor, degree: int = 3, gamma: float | None = None, coef: float = 1.0) -> None:
        self.real = as_float64_matrix("real_features", real, min_rows=2)
        self.degree = check_positive_int("degree", degree)
        self.gamma = 1.0 / self.real.shape[1] if gamma is None else check_real("gamma", gamma)
        self.coef = check_real("coef", coef)
        #: what floors and values are keyed by; the reference's own term depends on the same options
        self.name = self.reference_key = f"kid(degree={self.degree},gamma={self.gamma!r},coef={self.coef!r})"
        self._real_within: float | None = None
        #: each resample's real within-set term, a function of the real rows drawn alone
        self.real_side: RealSideTerms = compute_real_side

    def state(self) -> dict[str, Tensor]:
        """The reference's own term (its within-set kernel mean), computed if it was not yet."""
        if self._real_within is None:
            ones = torch.ones(1, self.real.shape[0], dtype=torch.float64)
            self._real_within = float(self._within(self.real, ones)[0])
        return {"within": torch.tensor([self._real_within], dtype=torch.float64)}

    def load_state(self, state: dict[str, Tensor]) -> None:
        """Use the term from :meth:`state` (of an engine over the same real rows and options)."""
        self._real_within = float(state["within"][0])

    def _kernel(self, x: Tensor, y: Tensor) -> Tensor:
        # in place on the product: half the time of (x @ y.T * γ + coef) ** degree, its temporaries
        product = torch.addmm(torch.full((1,), self.coef, dtype=x.dtype), x, y.T, alpha=self.gamma)
        return product.pow_(self.degree)

    def _diagonal(self, x: Tensor) -> Tensor:
        return ((x * x).sum(1) * self.gamma + self.coef) ** self.degree

    def _cross(self, x: Tensor, y: Tensor, wx: Tensor, wy: Tensor) -> Tensor:
        """Σ_ij wx[r,i] k(x_i, y_j) wy[r,j] for every r, over row blocks of the kernel matrix."""
        rows = max(1, _BLOCK_ENTRIES // y.shape[0])
        total = torch.zeros(wx.shape[0], dtype=torch.float64)
        for start in range(0, x.shape[0], rows):
            part = self._kernel(x[start : start + rows], y) @ wy.T
            total += (wx[:, start : start + rows] * part.T).sum(1)
        return total

    def _within(self, x: Tensor, w: Tensor) -> Tensor:
        """(Σ_{i,j} w_i w_j k(x_i, x_j) − Σ_i w_i k(x_i, x_i)) / (m(m−1)) for every row of w;
        the kernel is symmetric, so only the blocks on and right of the diagonal are computed."""
        rows = max(1, _BLOCK_ENTRIES // x.shape[0])
        total = torch.zeros(w.shape[0], dtype=torch.float64)
        for start in range(0, x.shape[0], rows):
            stop = min(x.shape[0], start + rows)
            block = self._kernel(x[start:stop], x[start:])
            part = block[:, : stop - start] @ w[:, start:stop].T + 2 * (block[:, stop - start :] @ w[:, stop:].T)
            total += (w[:, start:stop] * part.T).sum(1)
        m = w.sum(1)
        return (total - w @ self._diagonal(x)) / (m * (m - 1))

    def __call__(self, fake_features: ArrayLike) -> float:
        """:func:`kid_all_pairs` (real, fake) with this set's options."""
        real, fake = _check_feature_pair(self.real, fake_features)
        real_within = float(self.state()["within"][0])
        ones_f = torch.ones(1, fake.shape[0], dtype=torch.float64)
        cross = self._cross(real, fake, torch.ones(1, real.shape[0], dtype=torch.float64), ones_f)[0]
        value = real_within + self._within(fake, ones_f)[0] - 2 * cross / (real.shape[0] * fake.shape[0])
        return float(value)

    def resampled(self, fake_features: ArrayLike, real_index: np.ndarray, fake_index: np.ndarray) -> np.ndarray:
        """KID of ``real[real_index[r]]`` vs ``fake[fake_index[r]]`` for every row r (R×m and
        R×n row indices, repeats allowed): equal to calling :func:`kid_all_pairs` on the
        gathered rows, without gathering."""
        real, fake = _check_feature_pair(self.real, fake_features)
        wr, wf = _counts(real_index, real.shape[0]), _counts(fake_index, fake.shape[0])
        cross = self._cross(real, fake, wr, wf) / (wr.sum(1) * wf.sum(1))
        real_within = self.real_side("kid_within", real_index, lambda: self._within(real, wr))
        return (real_within + self._within(fake, wf) - 2 * cross).numpy()


class FidSets:
    """FID (:func:`fid`) of one real set against fake sets and against resamples of both."""

    def __init__(self, real: Tensor) -> None:
        self.real = as_float64_matrix("real_features", real, min_rows=2)
        self.name = self.reference_key = "fid"  # what floors, values and the reference's own terms are keyed by
        self._moments: tuple[Tensor, Tensor, Tensor] | None = None
        #: unused: a resample's real side (its mean and covariance, d² numbers per resample and
        #: class) would take more disk than recomputing it takes time
        self.real_side: RealSideTerms = compute_real_side

    def state(self) -> dict[str, Tensor]:
        """The reference's mean, covariance and its square root, computed if they were not yet."""
        if self._moments is None:
            mu_r, sigma_r = _mean_and_covariance(self.real)
            sigma_r = _symmetric(sigma_r)
            self._moments = (mu_r, sigma_r, _sqrtm_psd(sigma_r))
        return dict(zip(("mean", "covariance", "root"), self._moments))

    def load_state(self, state: dict[str, Tensor]) -> None:
        """Use the moments from :meth:`state` (of an engine over the same real rows)."""
        self._moments = (state["mean"], state["covariance"], state["root"])

    def __call__(self, fake_features: ArrayLike) -> float:
        """:func:`fid` (real, fake), the reference's mean, covariance and square root computed
        once for every fake set (the same operations, so the same numbers)."""
        _, fake = _check_feature_pair(self.real, fake_features)
        moments = self.state()
        mu_f, sigma_f = _mean_and_covariance(fake)
        return _frechet_checked(moments["mean"], moments["covariance"], moments["root"], mu_f, _symmetric(sigma_f))

    def resampled(self, fake_features: ArrayLike, real_index: np.ndarray, fake_index: np.ndarray) -> np.ndarray:
        """FID of ``real[real_index[r]]`` vs ``fake[fake_index[r]]`` for every row r, from
        count-weighted means and covariances (no gathered copies)."""
        real, fake = _check_feature_pair(self.real, fake_features)
        w_r, w_f = _counts(real_index, real.shape[0]), _counts(fake_index, fake.shape[0])
        dim = real.shape[1]
        if fake.shape[0] < dim:  # Σ_f = AᵀA with A (n×d) small: tr √(Σ_r Σ_f) from the n×n matrix A Σ_r Aᵀ
            mu_f = (w_f @ fake) / w_f.sum(1, keepdim=True)
            factor = _covariance_factor(fake, w_f, mu_f)
            mu_r, trace_r, inner = _projected_moments(real, w_r, factor)
            trace_sqrt = torch.linalg.eigvalsh(inner).clamp_min(0).sqrt().sum(1)
            value = (mu_r - mu_f).pow(2).sum(1) + trace_r + factor.pow(2).sum((1, 2)) - 2 * trace_sqrt
            return value.clamp_min(0.0).numpy()
        mu_r, sigma_r = _weighted_moments(real, w_r)
        mu_f, sigma_f = _weighted_moments(fake, w_f)
        if real.shape[0] < dim:
            trace_sqrt = _trace_sqrt_low_rank(_covariance_factor(real, w_r, mu_r), sigma_f)
        else:
            trace_sqrt = _trace_sqrt_products(sigma_r, sigma_f)
        traces = sigma_r.diagonal(dim1=1, dim2=2).sum(1) + sigma_f.diagonal(dim1=1, dim2=2).sum(1)
        value = (mu_r - mu_f).pow(2).sum(1) + traces - 2 * trace_sqrt
        return value.clamp_min(0.0).numpy()


def _weighted_moments(x: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
    """Per row of counts w (R×N): mean and unbiased covariance of the multiset, in one pass
    over x centred on its own mean (the shift keeps the one-pass form accurate). The
    scatter matrices of all R multisets are one matrix product, counts × the rows' outer
    products (R×N by N×d²), accumulated over row blocks."""
    centre = x.mean(0)
    xc = x - centre
    m = w.sum(1)
    dim = x.shape[1]
    rows = max(1, _BLOCK_ENTRIES // (dim * dim))
    scatter = torch.zeros(w.shape[0], dim * dim, dtype=torch.float64)
    for start in range(0, x.shape[0], rows):
        block = xc[start : start + rows]
        scatter.addmm_(w[:, start : start + rows], (block[:, :, None] * block[:, None, :]).reshape(len(block), -1))
    mean_c = (w @ xc) / m[:, None]
    outer_mean = m[:, None, None] * mean_c[:, :, None] * mean_c[:, None, :]
    covariance = (scatter.view(-1, dim, dim) - outer_mean) / (m - 1)[:, None, None]
    return centre + mean_c, 0.5 * (covariance + covariance.transpose(1, 2))


def _projected_moments(x: Tensor, w: Tensor, factor: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per row of counts w (R×N): the multiset's mean, the trace of its unbiased covariance Σ and
    A Σ Aᵀ for that row's A (factor, R×n×d), without forming Σ: A Σ Aᵀ = Σ_i w_i p_i p_iᵀ / (m − 1)
    with p_i = A (x_i − mean), n×N per resample instead of d×d (n < d: the small fake sets)."""
    centre = x.mean(0)
    xc = x - centre
    m = w.sum(1)
    mean_c = (w @ xc) / m[:, None]
    shift = factor @ mean_c[:, :, None]  # R×n×1
    inner = torch.zeros(w.shape[0], factor.shape[1], factor.shape[1], dtype=torch.float64)
    rows = max(1, _BLOCK_ENTRIES // (w.shape[0] * factor.shape[1]))
    for start in range(0, x.shape[0], rows):
        projected = factor @ xc[start : start + rows].T - shift  # R×n×rows
        inner += (projected * w[:, None, start : start + rows]) @ projected.transpose(1, 2)
    inner = 0.5 * (inner + inner.transpose(1, 2)) / (m - 1)[:, None, None]
    trace = (w @ (xc * xc).sum(1) - m * mean_c.pow(2).sum(1)) / (m - 1)
    return centre + mean_c, trace, inner


def _covariance_factor(x: Tensor, w: Tensor, mean: Tensor) -> Tensor:
    """A (R×N×d) with AᵀA the unbiased covariance of each count-weighted multiset (rows of w):
    row i of A is √(w_i / (m − 1)) · (x_i − mean)."""
    scale = (w / (w.sum(1, keepdim=True) - 1)).sqrt()
    return scale[:, :, None] * (x[None, :, :] - mean[:, None, :])


def _trace_sqrt_low_rank(factor: Tensor, sigma: Tensor) -> Tensor:
    """tr (Σ^½ AᵀA Σ^½)^½ per batch, for A (R×n×d) with n < d: the non-zero spectrum of Σ AᵀA
    is that of the n×n PSD matrix A Σ Aᵀ, so no d×d square root is needed, singular or not."""
    inner = factor @ sigma @ factor.transpose(1, 2)
    inner = 0.5 * (inner + inner.transpose(1, 2))
    return torch.linalg.eigvalsh(inner).clamp_min(0).sqrt().sum(1)


def _trace_sqrt_products(sigma_r: Tensor, sigma_f: Tensor) -> Tensor:
    """tr (Σ_r^½ Σ_f Σ_r^½)^½ for each pair of a batch of PSD matrices (R×d×d).

    With Σ_r = LLᵀ (Cholesky), LᵀΣ_fL has the spectrum of Σ_r^½ Σ_f Σ_r^½ (both are similar to
    Σ_rΣ_f), and a Cholesky factorisation costs a fraction of the eigendecomposition a matrix
    square root needs. Singular Σ_r (fewer rows than dimensions), where Cholesky fails, take
    the square root by eigendecomposition as :func:`frechet_distance` does.
    """
    factor, info = torch.linalg.cholesky_ex(sigma_r)
    inner = factor.transpose(1, 2) @ sigma_f @ factor
    singular = info != 0
    if bool(singular.any()):
        eigenvalues, eigenvectors = torch.linalg.eigh(sigma_r[singular])
        root = (eigenvectors * eigenvalues.clamp_min(0).sqrt()[:, None, :]) @ eigenvectors.transpose(1, 2)
        inner[singular] = root @ sigma_f[singular] @ root
    inner = 0.5 * (inner + inner.transpose(1, 2))
    return torch.linalg.eigvalsh(inner).clamp_min(0).sqrt().sum(1)


def set_statistic_engine(statistic: object) -> Callable[[Tensor], Any] | None:
    """The resampling engine computing ``statistic`` (:func:`fid`, :func:`kid_all_pairs`, or
    k-NN density / coverage (:mod:`cfcheck.metrics.manifold`) with their defaults), or None for
    any other callable."""
    if statistic is fid:
        return FidSets
    if statistic is kid_all_pairs:
        return KidSets
    return knn_engine(statistic)
