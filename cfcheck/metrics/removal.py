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
breaks exact ties in a random order fixed by a seed (the reference's random map also reorders
near-ties, by up to 1e-4 of the range), replaces the truncation by rounding, and removes the
*least* relevant ``fraction`` for LeRF (see its docstring).
"""

from __future__ import annotations

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_real, check_tensor, describe
from cfcheck.metrics.removal_solver import impute_planes

__all__ = [
    "DEFAULT_NOISE_STD",
    "NEIGHBOUR_WEIGHTS",
    "noisy_linear_imputation",
    "removal_count",
    "removal_mask",
]

#: ROAD's neighbour weights: (row offset, column offset) → weight. They sum to one.
NEIGHBOUR_WEIGHTS: dict[tuple[int, int], float] = {
    (-1, -1): 1 / 12,
    (-1, 0): 1 / 6,
    (-1, 1): 1 / 12,
    (0, -1): 1 / 6,
    (0, 1): 1 / 6,
    (1, -1): 1 / 12,
    (1, 0): 1 / 6,
    (1, 1): 1 / 12,
}

#: Standard deviation of the noise added to imputed pixels (ROAD's ``NoisyLinearImputer(noise=0.01)``).
DEFAULT_NOISE_STD = 0.01

_ORDERS = ("morf", "lerf")


def removal_count(fraction: float, num_pixels: int) -> int:
    """How many of ``num_pixels`` pixels a removal ``fraction`` removes: ``round(fraction · num_pixels)``
    (Python's ``round``: halves go to the even integer)."""
    return int(round(fraction * num_pixels))


def removal_mask(attribution: Tensor, fraction: float, order: str = "morf", *, tie_seed: int | None = None) -> Tensor:
    """The pixels ROAD removes: per image, the ``fraction`` of pixels with the highest (MoRF) or
    lowest (LeRF) attribution.

    Channels are combined by their signed sum, as ROAD's ``rescale_channel`` does (its min-max
    normalisation afterwards does not change the order); pass ``attribution.abs()`` to rank by
    magnitude instead.

    Ties matter: integrated gradients and input×gradient are exactly 0 wherever x = 0, most of a
    digit image. With ``tie_seed`` (what ROAD uses), exactly equal values are removed in a random
    order drawn from that seed, a fixed permutation per image (row i's depends only on the seed
    and i), so the same seed gives nested masks at every fraction and the same masks on every
    run. ROAD's reference adds a fixed random 1e-4 map for the same purpose. Without it
    (``None``, what ROAR uses, as its reference sorts without noise), the pixel with the smaller
    row-major index (row · W + column) goes first, in both orders: contiguous blocks of tied
    background are then removed from the top of the image down, which ROAD's imputation fills as
    one region and which smears the strokes next to it.

    LeRF here removes the ``fraction`` *least* relevant pixels; ROAD's ``ImputedDataset``
    with ``remove=False`` and ``th_p = p`` keeps the ``p`` most relevant and removes the rest,
    which is ``fraction = 1 − p`` here.

    Args:
        attribution: float N×H×W or N×C×H×W, finite.
        fraction: share of each image's H·W pixels to remove, in [0, 1]; exactly
            :func:`removal_count` ``(fraction, H·W)`` pixels are removed per image.
        order: ``"morf"`` (most relevant first) or ``"lerf"`` (least relevant first),
            case-insensitive.
        tie_seed: seed of the random order of exactly tied values, or ``None`` for raster order.

    Returns:
        bool N×H×W, True where a pixel is removed (the mask :func:`noisy_linear_imputation` takes).

    Example:
        >>> removal_mask(torch.tensor([[[0.1, 0.9], [0.5, 0.5]]]), 0.5)
        tensor([[[False,  True],
                 [ True, False]]])
    """
    scores = check_float_tensor("attribution", attribution)
    if scores.ndim not in (3, 4):
        raise ValueError(f"`attribution` must be N×H×W or N×C×H×W (one map per image), got shape {tuple(scores.shape)}")
    share = check_real("fraction", fraction, minimum=0.0)
    if share > 1.0:
        raise ValueError(f"`fraction` must lie in [0, 1] (a share of each image's pixels), got {share}")
    if not isinstance(order, str) or order.lower() not in _ORDERS:
        raise ValueError(f"`order` must be 'morf' or 'lerf', got {order!r}")
    if tie_seed is not None and (isinstance(tie_seed, bool) or not isinstance(tie_seed, int)):
        raise TypeError(f"`tie_seed` must be an int or None, got {describe(tie_seed)}")
    if scores.ndim == 4:
        scores = scores.to(torch.float64).sum(dim=1)
    n, height, width = scores.shape
    count = removal_count(share, height * width)
    flat = scores.reshape(n, height * width)
    descending = order.lower() == "morf"
    if tie_seed is None:
        # a stable sort keeps equal values in raster order, the tie-break documented above
        ranking = torch.sort(flat, dim=1, descending=descending, stable=True).indices
    else:
        # shuffle each row, then sort stably: equal values keep the shuffled order
        generator = torch.Generator().manual_seed(tie_seed)
        shuffle = torch.rand(n, height * width, generator=generator, dtype=torch.float64).argsort(dim=1)
        within = torch.sort(flat.gather(1, shuffle), dim=1, descending=descending, stable=True).indices
        ranking = shuffle.gather(1, within)
    removed = torch.zeros_like(flat, dtype=torch.bool)
    removed.scatter_(1, ranking[:, :count], True)
    return removed.reshape(n, height, width)


def noisy_linear_imputation(
    x: Tensor, mask: Tensor, *, noise_std: float = DEFAULT_NOISE_STD, generator: torch.Generator | None = None
) -> Tensor:
    """ROAD's noisy linear imputation of the removed pixels of a batch (rules in the module
    docstring): every removed pixel becomes the renormalised weighted mean of its in-image
    neighbours, removed neighbours included, then gets N(0, ``noise_std``²) noise.

    How it is solved (:mod:`cfcheck.metrics.removal_solver`): per image plane the system is M y = b with M = S − W_UU over the removed
    pixels U (S the in-image weight sums, W the neighbour weights), b = W_UK v over the kept
    neighbours K. The weights are symmetric, so M is symmetric; it is weakly diagonally dominant
    with strict dominance at every pixel touching a kept one, and every connected group of
    removed pixels touches one unless the whole plane is removed (refused), so M is positive
    definite. All planes of a batch are therefore solved together by preconditioned conjugate
    gradients (CG), in chunks of planes that fit in cache. The matrix is never assembled: the
    weights are the 3×3 kernel (1/12)·[1, 2, 1]ᵀ[1, 2, 1] minus its centre 1/3, so
    12·M·p = t⊙p − (T⊗T)·p with T the tridiagonal [1, 2, 1] along rows and columns (zero outside
    the image) and t = T·1: four shifted adds per product for the whole chunk. The
    preconditioner is the first two terms of the Neumann series of M⁻¹ (D⁻¹ + D⁻¹WD⁻¹, D the
    diagonal), which halves the iterations of Jacobi's D⁻¹ for one more stencil product each.
    float64 images are solved in float64 until every plane's preconditioned residual is below
    1e-10 of its right-hand side; other images (float32, half) in float32, half the memory
    traffic, to 1e-7, on planes of up to 128×128 pixels (larger ones in float64: float32 CG
    stops gaining at errors near 1e-5 on a 224×224 plane with 90 % of its rows removed). Each
    plane is first scaled so its kept values are at most 1 in magnitude (the system is linear),
    so tolerances mean the same for any image scale. The tests require agreement with
    ``scipy.sparse.linalg.spsolve`` to 1e-8 for float64 images and to 1e-5 for float32 ones
    (seen on 1,000 bundled 32×32 images at 50 % removal: 3e-7, the float32 rounding of the values).
    Iterations grow with the size of contiguous removed regions: on 32×32 planes, 10 (float32)
    or 14 (float64) for half the pixels removed at random, 29 / 37 for 90 %, 44 / 53 for a
    removed half image.

    Speed (``benchmarks/test_road.py``, 1,000 bundled 32×32 planes, half the pixels removed at
    random, one thread on this project's shared 2-core machine): 0.07–0.14 s, 21–32 times the
    per-image loop that builds each sparse system and calls ``scipy.sparse.linalg.spsolve``
    (the README has the measured figures). One block-diagonal scipy.sparse system for the batch,
    assembled without a per-image loop and factorised once by SuperLU, is at best 2.1 times
    that loop (``--bench-superlu``: 1.7 s with the ``NATURAL`` column ordering, 2.4–3.5 s with
    COLAMD or MMD, against 3.5 s for the loop in the same run).

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
    # removed pixels per image and mask channel (a sum is much faster than bool any/all on a CPU)
    counts = removed.flatten(2).sum(dim=2)
    if height * width and bool((counts == height * width).any()):
        bad = sorted({int(i) for i in torch.nonzero(counts == height * width)[:, 0]})
        raise ValueError(
            f"`mask` removes every pixel of image(s) {bad[:10]}{' …' if len(bad) > 10 else ''}: "
            "linear imputation needs at least one kept pixel per image and channel"
        )
    if not bool(counts.any()):
        return images.clone()
    planes_mask = removed.expand(n, channels, height, width).reshape(n * channels, height, width)
    result = impute_planes(images.reshape(n * channels, height, width), planes_mask)
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
