"""The solver behind ROAD's noisy linear imputation (:func:`cfcheck.metrics.removal.noisy_linear_imputation`,
whose docstring states the method and its measured accuracy and speed): the removed pixels of many
image planes at once, by preconditioned conjugate gradients on the neighbour-weight stencil, in a flat
layout that never assembles the matrix.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

#: Conjugate gradients stop once every plane's preconditioned residual is at most this fraction
#: of its right-hand side's, in the arithmetic the plane is solved in (the tests check the
#: result against a direct sparse solve).
_RTOL = {torch.float64: 1e-10, torch.float32: 1e-7}
#: Images that are not float64 are solved in float32 up to this many pixels per plane, in float64
#: beyond: float32 conjugate gradients stop gaining accuracy at an error of about 1e-5 on a
#: 224×224 plane with 90 % of its rows removed (5e-6 at 128×128, 3e-6 at 32×32).
_FLOAT32_MAX_PIXELS = 128 * 128
#: Pixels per chunk of planes solved together: big enough that torch's per-call overhead is
#: small, small enough that a chunk's work arrays stay in cache.
_CHUNK_PIXELS = 131_072


def _row_sums(length: int) -> Tensor:
    """t = T·1 for the tridiagonal [1, 2, 1] of size ``length`` with zeros outside: 4 inside,
    3 at an end, 2 for a single row."""
    t = torch.full((length,), 4.0, dtype=torch.float64)
    t[0] -= 1
    t[-1] -= 1
    return t


def impute_planes(values: Tensor, removed: Tensor) -> Tensor:
    """B planes (B×H×W, some pixel removed, none fully) with their removed pixels replaced by
    the noiseless imputation."""
    planes, height, width = values.shape
    single = values.dtype != torch.float64 and height * width <= _FLOAT32_MAX_PIXELS
    dtype = torch.float32 if single else torch.float64
    out = torch.empty_like(values)
    step = max(1, _CHUNK_PIXELS // (height * width))
    for start in range(0, planes, step):
        chunk = slice(start, start + step)
        grid = _Grid(removed[chunk], dtype)
        # kept values, 0 at removed pixels (x − x·1 is exactly 0; the bool ops are slower)
        flat = grid.flat(values[chunk])
        kept = flat.addcmul_(flat, grid.unknown, value=-1)
        # the system is linear: solve for kept values scaled to at most 1 in magnitude per plane,
        # so that tolerances neither underflow (tiny images) nor squares overflow (huge ones)
        # (amax and amin along a dimension are each ~10 times faster than aminmax on a CPU)
        scale = torch.maximum(kept.amax(dim=1, keepdim=True), kept.amin(dim=1, keepdim=True).neg_())
        scale = torch.where(scale > 0, scale, 1.0)
        y = grid.conjugate_gradients(grid.right_hand_side(kept, scale), _RTOL[dtype])
        # y is exactly 0 at kept pixels: adding it leaves them untouched
        out[chunk] = torch.addcmul(kept, y, scale).view(-1, height + 1, width + 1)[:, :height, :width]
    return out


class _Grid:
    """12·M for a chunk of B planes (removed pixels B×H×W), in a flat layout that makes the
    stencil cheap, with the work buffers of conjugate gradients in one dtype.

    Each plane is stored row after row with one zero *separator* column after every row and
    one zero separator row after the last (row length S = W + 1, plane length L = (H + 1)·S),
    and the planes one after another, so neighbours are flat offsets ±1 (columns) and ±S
    (rows), every shifted add is one contiguous slice of the whole chunk, and the separators
    (kept at zero in every vector the stencil is applied to) stand in for the missing
    neighbours beyond the edges; S + 1 zeros before and after the chunk do so for the first
    and the last plane.
    """

    def __init__(self, removed: Tensor, dtype: torch.dtype) -> None:
        batch, height, width = removed.shape
        self.batch, self.height, self.width, self.dtype = batch, height, width, dtype
        self.stride = width + 1
        self.length = (height + 1) * self.stride
        size, margin = batch * self.length, self.stride + 1
        like: dict[str, Any] = dict(dtype=dtype, device=removed.device)
        tt = torch.outer(_row_sums(height), _row_sums(width)).to(**like)
        self.tt = self.flat(tt.unsqueeze(0))
        self.unknown = self.flat(removed)
        # 12·s = t_row·t_col − 4, the diagonal (> 0 unless the plane is a single pixel)
        self.inverse_diagonal = self.unknown * (self.tt - 4).clamp_min(1).reciprocal()
        self.tiny = torch.finfo(dtype).tiny
        # work buffers: the stencil reads vectors from between the margins of a padded buffer,
        # one for search directions and one for the preconditioner
        self._padded = [torch.zeros(size + 2 * margin, **like) for _ in range(2)]
        self.direction, self._scaled = (
            padded[margin : margin + size].view(batch, self.length) for padded in self._padded
        )
        self._pairs = torch.empty(size + 2 * margin - 1, **like)
        self._triples = torch.empty(size + 2 * self.stride, **like)
        self._rows = self._pairs[: size + self.stride]  # the pairs are used up when the rows are made
        self._terms = self._pairs[:size].view(batch, self.length)  # products of a dot, between stencils
        self._product = torch.empty(batch, self.length, **like)
        self._preconditioned = torch.empty(batch, self.length, **like)

    def flat(self, planes: Tensor) -> Tensor:
        """b×H×W → b×L (this grid's dtype) with zero separators."""
        out = torch.zeros(planes.shape[0], self.height + 1, self.stride, dtype=self.dtype, device=planes.device)
        out[:, : self.height, : self.width] = planes
        return out.view(planes.shape[0], self.length)

    def _stencil(self, which: int) -> Tensor:
        """(T⊗T)·v into the product buffer for v the vector in padded buffer ``which``
        (meaningful off the separators)."""
        padded, stride = self._padded[which], self.stride
        torch.add(padded[:-1], padded[1:], out=self._pairs)  # v[j] + v[j+1]
        torch.add(self._pairs[:-1], self._pairs[1:], out=self._triples)  # v[j] + 2v[j+1] + v[j+2]
        torch.add(self._triples[:-stride], self._triples[stride:], out=self._rows)
        torch.add(self._rows[:-stride], self._rows[stride:], out=self._product.view(-1))
        return self._product

    def right_hand_side(self, kept: Tensor, scale: Tensor) -> Tensor:
        """12·b = (T⊗T)(kept values / scale) at removed pixels, 0 elsewhere, for kept values in
        this layout (0 at removed pixels, so the centre term is 0) and a scale per plane."""
        torch.div(kept, scale, out=self.direction)
        return self._stencil(0).mul(self.unknown)

    def negative_matvec(self) -> Tensor:
        """−12·M·p for the search direction p (zero off the removed pixels), at removed pixels;
        arbitrary elsewhere."""
        return self._stencil(0).addcmul_(self.tt, self.direction, value=-1)

    def precondition(self, r: Tensor) -> Tensor:
        """z = (D⁻¹ + D⁻¹·W·D⁻¹)·r with 12·M = D − W (D the diagonal): the first two terms of the
        Neumann series of (12·M)⁻¹ = (I − D⁻¹W)⁻¹·D⁻¹. D⁻¹W is non-negative with row sums at
        most 1 and below 1 where a kept pixel is adjacent, so its eigenvalues lie in (−1, 1)
        for every plane that keeps a pixel, and this z is symmetric positive definite in r.
        It halves the iterations of Jacobi (z = D⁻¹r) for four more passes each."""
        u = torch.mul(r, self.inverse_diagonal, out=self._scaled)
        wu = self._stencil(1).add_(u, alpha=-4)  # W·u = (T⊗T)·u − 4u at removed pixels
        return torch.addcmul(u, self.inverse_diagonal, wu, out=self._preconditioned)

    def _dot(self, a: Tensor, b: Tensor) -> Tensor:
        """Per-plane a·b, B×1."""
        return torch.mul(a, b, out=self._terms).sum(dim=1, keepdim=True)

    def conjugate_gradients(self, rhs: Tensor, rtol: float) -> Tensor:
        """Preconditioned CG (:meth:`precondition`) for 12·M·y = rhs, all planes together,
        until every plane's preconditioned residual r·z is at most ``rtol``² of its start.
        ``rhs`` is overwritten (it becomes the residual)."""
        y = torch.zeros_like(rhs)
        r = rhs
        z = self.precondition(r)
        p = self.direction  # search directions live in a padded buffer
        p.copy_(z)
        rz = self._dot(r, z)
        threshold = (rtol**2) * rz
        limit = 4 * self.height * self.width + 100
        for _ in range(limit):
            if bool((rz <= threshold).all()):
                return y
            q = self.negative_matvec()
            # −α = r·z / p·q with q = −12·M·p; p·M·p > 0 unless p = 0, and then r·z = 0 too: the
            # clamps only turn 0/0 into 0
            minus_alpha = rz / self._dot(p, q).clamp_max_(-self.tiny)
            y.addcmul_(minus_alpha, p, value=-1)
            r.addcmul_(minus_alpha, q, value=-1)
            z = self.precondition(r)
            rz_new = self._dot(r, z)
            torch.addcmul(z, rz_new / rz.clamp_min(self.tiny), p, out=p)  # p = z + β·p
            rz = rz_new
        if bool((rz <= threshold).all()):
            return y
        worst = float((rz / threshold.clamp_min(self.tiny)).sqrt().max())
        raise RuntimeError(
            f"linear imputation did not converge in {limit} conjugate-gradient iterations "
            f"(worst residual {worst:.3g} times the tolerance)"
        )
