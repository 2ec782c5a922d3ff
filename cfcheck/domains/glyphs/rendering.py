"""Batched renderer: warp each glyph's cached coverage map by its affine nuisances, pool, invert.

Per sample, the bank's coverage of (font, character) is sampled bilinearly on a supersampled
output grid through the inverse of x_out = k · R(rotation) · x_bank + shift (normalised
coordinates; k = scale / ``BANK_GLYPH_FRACTION``, so the glyph's longer side becomes ``scale``
of the canvas), average-pooled to 32×32 and, for inverse-colour samples, replaced by 1 − coverage.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .fonts import BANK_GLYPH_FRACTION, CANVAS, NUM_CHARACTERS, glyph_bank
from .sampling import GlyphFactors

IMAGE_SHAPE = (1, CANVAS, CANVAS)
#: Supersampling factor of the output grid (per axis) before average pooling.
SUPERSAMPLE = 2


def inverse_affine(factors: GlyphFactors) -> torch.Tensor:
    """N×2×3 ``theta`` for ``affine_grid``: output coordinates → bank coordinates (normalised).

    Rotation is counter-clockwise on screen (image rows grow downwards), shifts are in pixels
    (right, down).
    """
    angle = factors.rotation.double()
    cos, sin = torch.cos(angle), torch.sin(angle)
    # forward rotation on screen with y down is [[cos, sin], [-sin, cos]]; its inverse is the transpose
    inverse_rotation = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)
    linear = inverse_rotation * (BANK_GLYPH_FRACTION / factors.scale.double())[:, None, None]
    shift = torch.stack([factors.shift_x, factors.shift_y], -1).double() * (2.0 / CANVAS)
    offset = -(linear @ shift.unsqueeze(-1))
    return torch.cat([linear, offset], -1).float()


def render_coverage(factors: GlyphFactors, *, chunk_size: int = 512) -> torch.Tensor:
    """N×1×32×32 ink coverage in [0, 1] (colour inversion not applied); ``chunk_size`` bounds
    memory and does not change the result."""
    bank = glyph_bank()
    n = len(factors)
    out = torch.empty((n, *IMAGE_SHAPE), dtype=torch.float32)
    side = CANVAS * SUPERSAMPLE
    for start in range(0, n, chunk_size):
        part = factors[start : start + chunk_size]
        rows = part.font * NUM_CHARACTERS + part.character
        source = bank[rows].float().div_(255.0)
        grid = F.affine_grid(inverse_affine(part), [len(part), 1, side, side], align_corners=False)
        warped = F.grid_sample(source, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        out[start : start + len(part)] = F.avg_pool2d(warped, SUPERSAMPLE).clamp_(0.0, 1.0)
    return out


def render(factors: GlyphFactors, *, chunk_size: int = 512) -> torch.Tensor:
    """N×1×32×32 float32 images in [0, 1]: light glyphs on a dark background, or the inverse.

    Example:
        >>> from .sampling import SCENARIOS, sample_factors
        >>> render(sample_factors(2, 0, SCENARIOS["fonts6-corr50"])).shape
        torch.Size([2, 1, 32, 32])
    """
    if not isinstance(factors, GlyphFactors):
        raise TypeError(f"factors must be GlyphFactors, got {type(factors).__name__}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    coverage = render_coverage(factors, chunk_size=chunk_size)
    inverse = factors.inverse.bool()[:, None, None, None]
    return torch.where(inverse, 1.0 - coverage, coverage)
