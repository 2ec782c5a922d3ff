"""Pixel removal for ROAD (Rong et al. 2022, "A Consistent and Efficient Evaluation Strategy
for Attribution Methods"): which pixels an attribution removes, and the noisy linear
imputation that fills them, for a whole batch at once.

Noisy linear imputation, as the reference implementation (``road/imputations.py``,
``NoisyLinearImputer``, in ``tleemann/road_evaluation``) defines it:

* every removed pixel takes the weighted mean of its 8 neighbours, weight 1/6 for the 4
  direct and 1/12 for the 4 diagonal ones; removed neighbours are unknowns of the same
  linear system, so each image is one sparse linear system;
* neighbours outside the image are dropped and the remaining weights are renormalised to sum
  to one: the reference puts ``1 − Σ(weights of the out-of-image offsets)`` on the diagonal,
  i.e. divides by the sum of the in-image weights (a corner pixel's 5/12, an edge pixel's 2/3);
  neighbours that are themselves removed stay in that sum;
* each channel is imputed with the same mask, independently of the others;
* i.i.d. Gaussian noise of standard deviation ``noise`` (absolute, default 0.01, in the units
  of the image before any normalisation transform) is added to every imputed value and never
  to the kept ones: the reference adds ``noise · randn`` with ``noise = 0.01`` (the default of
  ``NoisyLinearImputer`` and of ``run_road``), so 0.01 is the standard deviation (variance 1e-4).

Ranking (``road/imputed_dataset.py``, ``road/utils.py``): the reference sums the attribution
over channels (signed), min-max normalises it, adds a fixed 1e-4·N(0, 1) map to break ties,
sorts descending and removes the first ``int(p·H·W)`` pixels for MoRF; for LeRF it removes
everything after the first ``int(p·H·W)``. :func:`removal_mask` keeps the signed channel sum,
replaces the random tie-break by a deterministic one and the truncation by rounding, and
removes the *least* relevant ``fraction`` for LeRF (see its docstring).
"""

from __future__ import annotations

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_real, check_tensor, describe

__all__ = [
    "DEFAULT_NOISE_STD",
    "NEIGHBOUR_WEIGHTS",
    "noisy_linear_imputation",
    "removal_count",
    "removal_mask",
]

#: ROAD's neighbour weights: (row offset, column offset) → weight. They sum to one.
NEIGHBOUR_WEIGHTS: dict[tuple[int, int], float] = {
    (-1, -1): 1 / 12, (-1, 0): 1 / 6, (-1, 1): 1 / 12,
    (0, -1): 1 / 6, (0, 1): 1 / 6,
    (1, -1): 1 / 12, (1, 0): 1 / 6, (1, 1): 1 / 12,
}

#: Standard deviation of the noise added to imputed pixels (ROAD's ``NoisyLinearImputer(noise=0.01)``).
DEFAULT_NOISE_STD = 0.01

_ORDERS = ("morf", "lerf")

#: Solving stops once every plane's residual (float64, weighted by the inverse diagonal) is
#: below this fraction of its right-hand side's; the tests check the result against a direct
#: sparse solve.
_RTOL = 1e-10
#: Pixels per chunk of planes solved together: big enough that torch's per-call overhead is
#: small, small enough that a chunk's work arrays stay in cache.
_CHUNK_PIXELS = 65_536
#: Corrections come from float32 conjugate gradients (half the memory traffic), each solved
#: to this relative residual, for at most this many refinement rounds; then float64 CG.
_MIXED_PRECISION = True
_INNER_RTOL = 1e-5
_MAX_ROUNDS = 6


def removal_count(fraction: float, num_pixels: int) -> int:
    """How many of ``num_pixels`` pixels a removal ``fraction`` removes: ``round(fraction · num_pixels)``
    (Python's ``round``: halves go to the even integer)."""
    return int(round(fraction * num_pixels))


def removal_mask(attribution: Tensor, fraction: float, order: str = "morf") -> Tensor:
    """The pixels ROAD removes: per image, the ``fraction`` of pixels with the highest (MoRF) or
    lowest (LeRF) attribution.

    Channels are combined by their signed sum, as ROAD's ``rescale_channel`` does (its min-max
    normalisation afterwards does not change the order); pass ``attribution.abs()`` to rank by
    magnitude instead. Ties are broken deterministically by raster position: of equal values,
    the pixel with the smaller row-major index (row · W + column) is removed first, in both
    orders. ROAD instead adds a fixed random 1e-4 map, which is neither deterministic nor
    limited to exact ties.

    LeRF here removes the ``fraction`` *least* relevant pixels; ROAD's ``ImputedDataset``
    with ``remove=False`` and ``th_p = p`` keeps the ``p`` most relevant and removes the rest,
    which is ``fraction = 1 − p`` here.

    Args:
        attribution: float N×H×W or N×C×H×W, finite.
        fraction: share of each image's H·W pixels to remove, in [0, 1]; exactly
            :func:`removal_count` ``(fraction, H·W)`` pixels are removed per image.
        order: ``"morf"`` (most relevant first) or ``"lerf"`` (least relevant first),
            case-insensitive.

    Returns:
        bool N×H×W, True where a pixel is removed (the mask :func:`noisy_linear_imputation` takes).

    Example:
        >>> removal_mask(torch.tensor([[[0.1, 0.9], [0.5, 0.5]]]), 0.5)
        tensor([[[False,  True],
                 [ True, False]]])
    """
    scores = check_float_tensor("attribution", attribution)
    if scores.ndim not in (3, 4):
        raise ValueError(
            f"`attribution` must be N×H×W or N×C×H×W (one map per image), got shape {tuple(scores.shape)}"
        )
    share = check_real("fraction", fraction, minimum=0.0)
    if share > 1.0:
        raise ValueError(f"`fraction` must lie in [0, 1] (a share of each image's pixels), got {share}")
    if not isinstance(order, str) or order.lower() not in _ORDERS:
        raise ValueError(f"`order` must be 'morf' or 'lerf', got {order!r}")
    if scores.ndim == 4:
        scores = scores.to(torch.float64).sum(dim=1)
    n, height, width = scores.shape
    count = removal_count(share, height * width)
    flat = scores.reshape(n, height * width)
    # a stable sort keeps equal values in raster order, which is the tie-break documented above
    ranking = torch.sort(flat, dim=1, descending=order.lower() == "morf", stable=True).indices
    removed = torch.zeros_like(flat, dtype=torch.bool)
    removed.scatter_(1, ranking[:, :count], True)
    return removed.reshape(n, height, width)


def noisy_linear_imputation(
    x: Tensor, mask: Tensor, *, noise_std: float = DEFAULT_NOISE_STD, generator: torch.Generator | None = None
) -> Tensor:
    """ROAD's noisy linear imputation of the removed pixels of a batch (rules in the module
    docstring): every removed pixel becomes the renormalised weighted mean of its in-image
    neighbours, removed neighbours included, then gets N(0, ``noise_std``²) noise.

    How it is solved: per image plane the system is M y = b with M = S − W_UU over the removed
    pixels U (S the in-image weight sums, W the neighbour weights), b = W_UK v over the kept
    neighbours K. The weights are symmetric, so M is symmetric; it is weakly diagonally dominant
    with strict dominance at every pixel touching a kept one, and every connected group of
    removed pixels touches one unless the whole plane is removed (refused), so M is positive
    definite. All planes of a batch are therefore solved together by Jacobi-preconditioned
    conjugate gradients (CG), in chunks of planes that fit in cache. The matrix is never
    assembled: the weights are the 3×3 kernel (1/12)·[1, 2, 1]ᵀ[1, 2, 1] minus its centre 1/3,
    so 12·M·p = t⊙p − (T⊗T)·p with T the tridiagonal [1, 2, 1] along rows and columns (zero
    outside the image) and t = T·1: four shifted adds per product for the whole chunk. CG runs
    in float32 (half the memory traffic) as iterative refinement: each round solves for a
    correction, and the residual b − M·y of the float64 iterate decides when to stop; planes on
    which float32 stops gaining are finished by float64 CG. Each plane is first scaled so its
    kept values are at most 1 in magnitude (the system is linear), so tolerances mean the same
    for any image scale. The result is exact to the float64 stopping rule, every plane's
    residual below 1e-10 of its right-hand side: the tests require agreement with
    ``scipy.sparse.linalg.spsolve`` to 1e-8 for float64 images (seen: about 1e-13) and to 1e-5
    for float32 ones.

    Why not one block-diagonal scipy.sparse system: on this project's shared 2-core machine,
    for 1,000 32×32 planes with half the pixels removed at random, one SuperLU solve of the
    block-diagonal system took 1.2–2.6 s (by column ordering) and a banded Cholesky (LAPACK
    ``pbsv``) of the whole batch 0.8 s, against 1.1–1.5 s for ``spsolve`` image by image
    (2.6–3.0 s with building the systems); this solver takes about 0.5 s, 3–6 times faster
    (``benchmarks/bench_road.py``) but short of the 20 times hoped for: a CG iteration is
    about ten passes over the batch, and a pass costs about 1 ns per value there. The number
    of iterations grows with the size of contiguous removed regions (random masks: about 30
    in all; a removed half image: about 100); in exact arithmetic CG ends within as many
    iterations as there are removed pixels.

    Args:
        x: float N×C×H×W images, finite (ROAD imputes before any normalisation transform).
        mask: bool N×H×W (one mask for all channels) or N×C×H×W (one per channel), True where
            a pixel is removed. ROAD's own masks use 1 for kept pixels: pass ``mask == 0``.
        noise_std: standard deviation of the Gaussian noise added to each imputed value, ≥ 0
            (0 gives the noiseless linear imputation).
        generator: source of the noise (``None``: torch's global generator); not used when
            ``noise_std`` is 0.

    Returns:
        A new tensor like ``x``: kept pixels copied unchanged, removed ones imputed.

    Raises:
        ValueError: for a wrong shape, dtype or non-finite value, a negative ``noise_std``, or
            a plane whose pixels are all removed (nothing to interpolate from; the system is
            singular).
        RuntimeError: if conjugate gradients do not converge within 4·H·W + 100 iterations
            (not seen in the tests).

    Example:
        >>> x = torch.tensor([[[[0.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]]])
        >>> mask = torch.zeros(1, 3, 3, dtype=torch.bool)
        >>> mask[0, 1, 1] = True
        >>> noisy_linear_imputation(x, mask, noise_std=0.0)[0, 0, 1]
        tensor([0., 0., 0.])
    """
    images = check_float_tensor("x", x, ndim=4)
    removed = _check_mask(mask, images)
    std = check_real("noise_std", noise_std, minimum=0.0)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"`generator` must be a torch.Generator or None, got {describe(generator)}")
    n, channels, height, width = images.shape
    planes_mask = removed.expand(n, channels, height, width).reshape(n * channels, height, width)
    empty = planes_mask.flatten(1).all(dim=1)
    if height * width and bool(empty.any()):
        bad = sorted({int(i) // channels for i in torch.nonzero(empty).flatten()})
        raise ValueError(
            f"`mask` removes every pixel of image(s) {bad[:10]}{' …' if len(bad) > 10 else ''}: "
            "linear imputation needs at least one kept pixel per image and channel"
        )
    values = images.reshape(n * channels, height, width).to(torch.float64)
    solved = _solve_planes(values, planes_mask)
    result = torch.where(planes_mask, solved.to(images.dtype), images.reshape(n * channels, height, width))
    result = result.reshape(n, channels, height, width)
    if std > 0:
        noise = torch.randn(result.shape, generator=generator, dtype=result.dtype, device=result.device)
        result = torch.where(removed, result + std * noise, result)
    return result


def _check_mask(mask: object, images: Tensor) -> Tensor:
    tensor = check_tensor("mask", mask)
    if tensor.dtype != torch.bool:
        raise TypeError(
            f"`mask` must be a bool tensor (True = removed), got dtype {tensor.dtype}; "
            "for ROAD-style masks where 1 means kept, pass `mask == 0`"
        )
    n, channels, height, width = images.shape
    if tensor.shape == (n, height, width):
        return tensor.to(images.device).unsqueeze(1)
    if tensor.shape == (n, channels, height, width):
        return tensor.to(images.device)
    raise ValueError(
        f"`mask` must be N×H×W {(n, height, width)} or N×C×H×W {(n, channels, height, width)} "
        f"to match `x`, got shape {tuple(tensor.shape)}"
    )


def _row_sums(length: int) -> Tensor:
    """t = T·1 for the tridiagonal [1, 2, 1] of size ``length`` with zeros outside: 4 inside,
    3 at an end, 2 for a single row."""
    t = torch.full((length,), 4.0, dtype=torch.float64)
    t[0] -= 1
    t[-1] -= 1
    return t


def _solve_planes(values: Tensor, removed: Tensor) -> Tensor:
    """The noiseless imputation of B planes (float64 B×H×W): removed pixels solved, others kept."""
    planes, height, width = values.shape
    out = values.clone()
    if planes == 0 or height * width == 0 or not bool(removed.any()):
        return out
    # the system is linear: solve for kept values scaled to at most 1 in magnitude per plane, so
    # that tolerances neither underflow (tiny images) nor squares overflow (huge ones)
    scale = torch.where(removed, 0.0, values.abs()).amax(dim=(1, 2), keepdim=True)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    step = max(1, _CHUNK_PIXELS // (height * width))
    for start in range(0, planes, step):
        chunk = slice(start, start + step)
        if bool(removed[chunk].any()):
            solution = _solve_chunk(values[chunk] / scale[chunk], removed[chunk]) * scale[chunk]
            out[chunk] = torch.where(removed[chunk], solution, out[chunk])
    return out


def _solve_chunk(values: Tensor, removed: Tensor) -> Tensor:
    """Mixed-precision iterative refinement: float32 conjugate gradients find corrections, float64
    residuals (b − M·y, computed exactly from the float64 iterate) decide when to stop. Planes
    whose float32 corrections stop gaining a factor 10 per round are finished in float64."""
    exact = _Grid(removed, torch.float64)
    rhs = exact.right_hand_side(values)
    target = (_RTOL**2) * exact.norm2(rhs)
    y = torch.zeros_like(rhs)
    residual, norm2 = rhs, exact.norm2(rhs)
    fast = _Grid(removed, torch.float32) if _MIXED_PRECISION else None
    for _ in range(_MAX_ROUNDS if fast is not None else 0):
        if bool((norm2 <= target).all()):
            break
        low = residual.to(torch.float32)
        # ask each round for at most what is still missing, with a factor 10 to spare
        reduction = (1e-2 * target / norm2.clamp_min(1e-300)).clamp_min(_INNER_RTOL**2)
        correction, _ = fast.conjugate_gradients(low, reduction.to(torch.float32) * fast.norm2(low), strict=False)
        y.add_(correction.to(torch.float64))
        residual = exact.residual(rhs, y)
        previous, norm2 = norm2, exact.norm2(residual)
        if not bool(((norm2 <= target) | (norm2 <= 1e-2 * previous)).all()):
            break
    if not bool((norm2 <= target).all()):
        correction, _ = exact.conjugate_gradients(residual, target, strict=True)
        y.add_(correction)
        residual = exact.residual(rhs, y)
        if not bool((exact.norm2(residual) <= 1e4 * target + 1e-280).all()):
            raise RuntimeError("linear imputation: conjugate gradients lost accuracy (true residual too large)")
    return exact.unflat(y)


class _Grid:
    """12·M for a chunk of B planes (removed pixels B×H×W), in a flat layout that makes the
    stencil cheap, with the work buffers of conjugate gradients in one dtype.

    Each plane is stored row after row with one zero *separator* column after every row
    (row length S = W + 1, flat length L = H·S), so neighbours are flat offsets ±1 (columns)
    and ±S (rows), every shifted add is a unit-stride slice of the whole chunk, and the
    separator (kept at zero in every search direction) stands in for the missing neighbours
    beyond the left and right edges; zero padding at both ends of each flat plane stands in
    for those above the first and below the last row.
    """

    def __init__(self, removed: Tensor, dtype: torch.dtype) -> None:
        batch, height, width = removed.shape
        self.batch, self.height, self.width, self.dtype = batch, height, width, dtype
        self.stride = width + 1
        self.length = height * self.stride
        like = dict(dtype=dtype, device=removed.device)
        tt = torch.outer(_row_sums(height), _row_sums(width)).to(**like)
        self.tt = self.flat(tt.unsqueeze(0))[0]
        self.unknown = self.flat(removed.to(dtype))
        # 12·s = t_row·t_col − 4, the diagonal (> 0 unless the plane is a single pixel)
        self.inverse_diagonal = self.unknown / (self.tt - 4).clamp_min(1)
        self.tiny = torch.finfo(dtype).tiny
        # work buffers: p with one zero either side, u with S zeros either side
        self._padded_p = torch.zeros(batch, self.length + 2, **like)
        self._padded_u = torch.zeros(batch, self.length + 2 * self.stride, **like)
        self._pairs = torch.empty(batch, self.length + 1, **like)
        self._row_pairs = torch.empty(batch, self.length + self.stride, **like)
        self._product = torch.empty(batch, self.length, **like)

    def flat(self, planes: Tensor) -> Tensor:
        """B×H×W → B×L with a zero separator column after each row."""
        return torch.nn.functional.pad(planes, (0, 1)).reshape(planes.shape[0], self.length)

    def unflat(self, flat: Tensor) -> Tensor:
        return flat.reshape(self.batch, self.height, self.stride)[:, :, : self.width]

    def _stencil(self, p: Tensor) -> Tensor:
        """(T⊗T)·p into the product buffer (meaningful off the separator columns)."""
        padded, pairs, row_pairs, stride = self._padded_p, self._pairs, self._row_pairs, self.stride
        if p.data_ptr() != padded[:, 1:-1].data_ptr():
            padded[:, 1:-1].copy_(p)
        torch.add(padded[:, :-1], padded[:, 1:], out=pairs)  # p[j−1] + p[j]
        torch.add(pairs[:, :-1], pairs[:, 1:], out=self._padded_u[:, stride:-stride])  # p[j−1] + 2p[j] + p[j+1]
        torch.add(self._padded_u[:, :-stride], self._padded_u[:, stride:], out=row_pairs)
        return torch.add(row_pairs[:, :-stride], row_pairs[:, stride:], out=self._product)

    def negative_matvec(self, p: Tensor) -> Tensor:
        """−12·M·p at removed pixels (for p zero elsewhere); arbitrary at kept ones."""
        return self._stencil(p).addcmul_(self.tt, p, value=-1)

    def right_hand_side(self, values: Tensor) -> Tensor:
        """12·b = (T⊗T)(kept values) at removed pixels (the centre term is 0 there)."""
        kept = self.flat(values.to(self.dtype) * (self.unflat(self.unknown) == 0))
        return self._stencil(kept) * self.unknown

    def residual(self, rhs: Tensor, y: Tensor) -> Tensor:
        """12·(b − M·y) at removed pixels, zero elsewhere."""
        return (rhs + self.negative_matvec(y)) * self.unknown

    def norm2(self, r: Tensor) -> Tensor:
        """Per-plane squared norm weighted by the inverse diagonal (the preconditioned norm)."""
        return torch.linalg.vecdot(r, r * self.inverse_diagonal)

    def conjugate_gradients(self, rhs: Tensor, threshold: Tensor, *, strict: bool) -> tuple[Tensor, bool]:
        """Jacobi-preconditioned CG for 12·M·y = rhs, all planes together, until every plane's
        preconditioned squared residual is ≤ ``threshold``; ``strict`` raises when the
        iteration limit comes first, otherwise the iterate is returned with ``False``."""
        y = torch.zeros_like(rhs)
        r = rhs.clone()
        z = r * self.inverse_diagonal
        p = self._padded_p[:, 1:-1]  # search directions live in the padded buffer
        p.copy_(z)
        rz = torch.linalg.vecdot(r, z)
        zero = torch.zeros((), dtype=self.dtype, device=rhs.device)
        limit = 4 * self.height * self.width + 100
        for _ in range(limit):
            if bool((rz <= threshold).all()):
                return y, True
            q = self.negative_matvec(p)
            pq = -torch.linalg.vecdot(p, q)
            alpha = torch.where(pq > 0, rz / pq.clamp_min(self.tiny), zero).unsqueeze(1)
            y.addcmul_(alpha, p)
            r.addcmul_(alpha, q)
            torch.mul(r, self.inverse_diagonal, out=z)
            rz_new = torch.linalg.vecdot(r, z)
            beta = torch.where(rz > 0, rz_new / rz.clamp_min(self.tiny), zero).unsqueeze(1)
            torch.addcmul(z, beta, p, out=p)  # p = z + β·p
            rz = rz_new
        if bool((rz <= threshold).all()):
            return y, True
        if strict:
            worst = float((rz / threshold.clamp_min(self.tiny)).sqrt().max())
            raise RuntimeError(
                f"linear imputation did not converge in {limit} conjugate-gradient iterations "
                f"(worst residual {worst:.3g} times the tolerance)"
            )
        return y, False
