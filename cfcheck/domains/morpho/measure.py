"""Image-based attribute measurements (no model): stroke thickness and intensity.

These are what the effectiveness suites call "measured analytically on the image"; they only see
pixels, so they apply to counterfactuals of any method.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .render import FOREGROUND_COVERAGE, IMAGE_SHAPE

# Gradients on the 2×2 cells between pixel centres: for an anti-aliased edge of grey level L the
# summed gradient magnitude across the edge is L per unit length, so Σ|∇x| = L·perimeter and
# Σx = L·area. (Central differences would blur a 1-pixel line into half its perimeter.)
_DX = torch.tensor([[[[-0.5, 0.5], [-0.5, 0.5]]]])
_DY = _DX.transpose(-1, -2).contiguous()


def _check_images(images: torch.Tensor) -> None:
    if not isinstance(images, torch.Tensor):
        raise TypeError(f"images must be a torch.Tensor, got {type(images).__name__}")
    if images.ndim != 4 or tuple(images.shape[1:]) != IMAGE_SHAPE:
        raise ValueError(f"images must have shape N×{'×'.join(map(str, IMAGE_SHAPE))}, got {tuple(images.shape)}")


def measure_thickness(images: torch.Tensor) -> torch.Tensor:
    """Estimated stroke width in output pixels, one per image: 2·area / perimeter.

    Area and perimeter are both in units of the stroke's grey level, which cancels, so the
    estimate does not depend on intensity. Blank images give 0.
    """
    _check_images(images)
    x = images.detach().float()
    padded = F.pad(x, (1, 1, 1, 1))
    gx = F.conv2d(padded, _DX)
    gy = F.conv2d(padded, _DY)
    perimeter = torch.sqrt(gx.square() + gy.square()).flatten(1).sum(1)
    area = x.flatten(1).sum(1)
    return torch.where(perimeter > 0, 2.0 * area / perimeter.clamp_min(1e-12), torch.zeros_like(area))


def measure_intensity(images: torch.Tensor) -> torch.Tensor:
    """Estimated foreground grey level in [0, 255]: median of pixels ≥ half the image's maximum.

    This mirrors the renderer's normalisation (foreground = coverage ≥ 0.5), so it recovers the
    SCM intensity exactly whenever some pixel is fully covered and nothing saturated.
    """
    _check_images(images)
    flat = images.detach().float().flatten(1)
    peak = flat.max(dim=1, keepdim=True).values
    foreground = torch.where((flat >= FOREGROUND_COVERAGE * peak) & (peak > 0), flat, torch.nan)
    median = torch.nanmedian(foreground, dim=1).values
    return torch.nan_to_num(median, nan=0.0) * 255.0
