"""Removal benchmarks' perturbations and curves, as pure functions on batches.

Three ways to remove what an attribution a says a classifier uses (Park et al. 2023):

* **ROAR** (Hooker et al. 2019): the top (MoRF) or bottom (LeRF) ``fraction`` of each input's
  pixels by attribution are replaced by a fixed value (:func:`fixed_value_removal`), the
  model is retrained on the removed training set and its test accuracy recorded;
* **ROAD** (Rong et al. 2022): the same pixels are filled by noisy linear imputation
  (:func:`cfcheck.metrics.removal.noisy_linear_imputation`); no retraining;
* **GOAR** (Park et al. 2023): the input moves against the feature, x − v with
  v = s·a/‖a‖ (:func:`feature_removal`), and is projected back to the data manifold by a
  diffusion model (:func:`cfcheck.models.generative.diffusion.projection.manifold_projection`,
  a model's operation, beside the DDIM sampler it runs): treated as noise of its own size, v fixes a
  timestep, 0.16·T more noise is added and DDIM denoises to t = 0 on a 25-step grid. The
  model is retrained per strength s; the curve counts inputs misclassified at any strength up
  to s (:func:`cumulative_errors`), because a projected input may land on either class.

A curve here is per input: an L×N matrix (one row per removal level) of 0/1 outcomes, so its
area (:func:`curve_area`) is a per-input number whose mean is the curve's area. A curve is one
retraining's; the attribution kind repeats the retraining and gives the interval over draws and
inputs (:mod:`cfcheck.kinds.attribution.removal_scoring`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor

__all__ = [
    "cumulative_errors",
    "curve_area",
    "feature_removal",
    "fixed_value_removal",
]


def fixed_value_removal(x: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    """ROAR's removal: masked pixels of every channel set to that channel's ``value``.

    Args:
        x: float N×C×H×W.
        mask: bool N×H×W, True where a pixel is removed (from
            :func:`cfcheck.metrics.removal.removal_mask`).
        value: float C, the fill value per channel (ROAR uses the training data's mean).

    Returns:
        A new tensor like ``x``.
    """
    images = check_float_tensor("x", x)
    if images.ndim != 4 or mask.shape != (images.shape[0], *images.shape[2:]) or mask.dtype != torch.bool:
        raise ValueError(
            f"expected x N×C×H×W and a bool mask N×H×W, got {tuple(images.shape)} and {mask.dtype} {tuple(mask.shape)}"
        )
    fill = torch.as_tensor(value, dtype=images.dtype, device=images.device).reshape(1, -1, 1, 1)
    if fill.shape[1] != images.shape[1]:
        raise ValueError(f"`value` must have one entry per channel ({images.shape[1]}), got {fill.shape[1]}")
    return torch.where(mask[:, None], fill.expand_as(images), images)


def feature_removal(x: Tensor, attribution: Tensor, strength: float) -> Tensor:
    """GOAR's perturbation x − s·a/‖a‖ per input (an all-zero attribution removes nothing).

    Args:
        x: float N×… inputs.
        attribution: float, shaped like ``x``: the feature direction (it raises the evidence
            for the explained class, so subtracting it removes that evidence).
        strength: s ≥ 0, the Euclidean length of the move, in the input's units.
    """
    values = check_float_tensor("x", x)
    feature = check_float_tensor("attribution", attribution)
    if feature.shape != values.shape:
        raise ValueError(f"`attribution` must be shaped like `x` {tuple(values.shape)}, got {tuple(feature.shape)}")
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not 0 <= strength < math.inf:
        raise ValueError(f"`strength` must be a finite number >= 0, got {strength!r}")
    norms = feature.flatten(1).norm(dim=1).view(-1, *([1] * (values.dim() - 1)))
    direction = torch.where(norms > 0, feature / norms.clamp_min(torch.finfo(feature.dtype).tiny), 0.0)
    return values - strength * direction.to(values.dtype)


def cumulative_errors(correct: Tensor) -> Tensor:
    """GOAR's count: 1 where an input was misclassified at this level or any earlier one.

    Args:
        correct: L×N bool or 0/1, row ℓ the outcomes at the ℓ-th (increasing) strength.

    Returns:
        float L×N, the running maximum of 1 − correct down the levels.
    """
    wrong = 1.0 - torch.as_tensor(correct).to(torch.float64)
    if wrong.ndim != 2:
        raise ValueError(f"`correct` must be L×N (levels × inputs), got shape {tuple(wrong.shape)}")
    return torch.cummax(wrong, dim=0).values


def curve_area(values: Tensor, levels: Sequence[float]) -> Tensor:
    """Per input, the trapezoid area under ``values`` over ``levels`` divided by their span:
    the curve's mean height (a curve constant at c has area c).

    Args:
        values: L×N, row ℓ at ``levels[ℓ]``.
        levels: L ≥ 2 increasing numbers.

    Returns:
        float64 N.
    """
    heights = torch.as_tensor(values).to(torch.float64)
    positions = torch.as_tensor(list(levels), dtype=torch.float64)
    if heights.ndim != 2 or heights.shape[0] != positions.numel() or positions.numel() < 2:
        raise ValueError(
            f"`values` must be L×N with L = len(levels) ≥ 2, got {tuple(heights.shape)} and {positions.numel()} levels"
        )
    widths = positions.diff()
    if bool((widths <= 0).any()):
        raise ValueError(f"`levels` must increase, got {list(levels)}")
    area = ((heights[1:] + heights[:-1]) / 2 * widths[:, None]).sum(0)
    return area / (positions[-1] - positions[0])
