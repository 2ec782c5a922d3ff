"""Image-based attribute measurements (no model): stroke thickness and intensity.

These are what the effectiveness suites call "measured analytically on the image"; they only see
pixels, so they apply to counterfactuals of any method. Their own error, which the SCM effectiveness
and causal-graph scores include: thickness MAE 0.125 px (about 0.2 sd) on the test split, intensity
exact (tests/domains/test_morpho.py).
"""

from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn.functional as F

from .rendering import FOREGROUND_COVERAGE, IMAGE_SHAPE


def _check_images(images: torch.Tensor) -> None:
    if not isinstance(images, torch.Tensor):
        raise TypeError(f"images must be a torch.Tensor, got {type(images).__name__}")
    if images.ndim != 4 or tuple(images.shape[1:]) != IMAGE_SHAPE:
        raise ValueError(f"images must have shape N×{'×'.join(map(str, IMAGE_SHAPE))}, got {tuple(images.shape)}")


def _area_over_perimeter(x: torch.Tensor) -> torch.Tensor:
    """Raw 2·Σx / Σ|∇x| per image (0 for blank images).

    The gradient lives on the 2×2 cells between pixel centres. Across an anti-aliased edge of grey
    level L the summed gradient magnitude is L per unit length, so Σ|∇x| = L·perimeter while
    Σx = L·area. (Central differences would blur a 1-pixel line into half its perimeter.)
    """
    padded = F.pad(x[:, 0], (1, 1, 1, 1))
    horizontal = padded[:, :, 1:] - padded[:, :, :-1]
    vertical = padded[:, 1:, :] - padded[:, :-1, :]
    gx = 0.5 * (horizontal[:, 1:, :] + horizontal[:, :-1, :])
    gy = 0.5 * (vertical[:, :, 1:] + vertical[:, :, :-1])
    perimeter = torch.hypot(gx, gy).flatten(1).sum(1)
    area = x.flatten(1).sum(1)
    return torch.where(perimeter > 0, 2.0 * area / perimeter.clamp_min(1e-12), torch.zeros_like(area))


def _rings(radii: np.ndarray, widths: np.ndarray, supersample: int = 8) -> torch.Tensor:
    """Anti-aliased centred rings, one per (width, radius), by brute-force supersampling."""
    side = 32 * supersample
    centres = (torch.arange(side, dtype=torch.float32) + 0.5) / supersample - 16.0
    r = torch.sqrt(centres[None, :] ** 2 + centres[:, None] ** 2)
    distance = (r[None] - torch.as_tensor(radii, dtype=torch.float32)[:, None, None]).abs()
    half = torch.as_tensor(widths, dtype=torch.float32)[:, None, None, None] / 2
    inside = (distance[None] <= half).float().flatten(0, 1).unsqueeze(1)
    return F.avg_pool2d(inside, supersample)


@functools.lru_cache(maxsize=1)
def _ring_calibration() -> tuple[np.ndarray, np.ndarray]:
    """(raw estimate, true width) of rings: strokes without ends, where 2·A/P is exact in theory.

    Below ~2 px a stroke never reaches its full grey level, the summed gradient falls short of
    2·level per unit length and the raw estimate is too large (1 px reads as ~1.5). Mapping raw
    estimates back through this monotone curve, averaged over ring radii (i.e. over sub-pixel
    phases and orientations), removes that bias; above 2 px it is the identity to within 1%.
    """
    widths = np.arange(0.5, 8.01, 0.25)
    radii = np.linspace(6.0, 11.0, 11)
    raw = _area_over_perimeter(_rings(radii, widths)).view(len(widths), len(radii)).mean(1).double().numpy()
    if not np.all(np.diff(raw) > 0):
        raise RuntimeError("thickness calibration curve is not monotone")
    return raw, widths


def measure_thickness(images: torch.Tensor) -> torch.Tensor:
    """Estimated stroke width in output pixels, one per image: 2·area / perimeter.

    Area and perimeter are both in units of the stroke's grey level, which cancels, so the
    estimate does not depend on intensity. The raw ratio is mapped through a calibration on
    anti-aliased rings (see ``_ring_calibration``) so thin strokes are not overestimated.
    Stroke ends and junctions still bias it slightly for digits. Blank images give 0.
    """
    _check_images(images)
    raw = _area_over_perimeter(images.detach().float()).double().numpy()
    curve_raw, curve_true = _ring_calibration()
    calibrated = np.interp(raw, curve_raw, curve_true)
    # Outside the table: identity-shifted extrapolation (the curve's slope there is ~1).
    above = raw > curve_raw[-1]
    calibrated[above] = raw[above] + (curve_true[-1] - curve_raw[-1])
    calibrated[raw <= 0] = 0.0
    return torch.from_numpy(calibrated).float()


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
