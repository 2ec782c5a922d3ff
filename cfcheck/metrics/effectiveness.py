"""Effectiveness of an SCM counterfactual: does the image show the parents the intervention asks
for? (Melistas et al. 2024 §3.2, measured here on the image itself as well.)

Pure functions of measured and wanted parent values; the suites measure continuous parents on
the image (the domain's ``measure_factors``) and categorical ones with the attribute oracle.
"""

from __future__ import annotations

import torch  # noqa: F401  (the doctest examples)
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_same_shape

__all__ = ["categorical_hits", "standardised_error"]


def standardised_error(measured: Tensor, wanted: Tensor, scale: float) -> Tensor:
    """|measured − wanted| / scale per counterfactual (scale: the parent's standard deviation on
    real data, so one bar serves parents in pixels and in grey levels).

    Example:
        >>> standardised_error(torch.tensor([2.0, 3.5]), torch.tensor([2.5, 3.0]), 0.5)
        tensor([1., 1.])
    """
    measured_t = check_float_tensor("measured", measured, min_ndim=1)
    wanted_t = check_float_tensor("wanted", wanted, min_ndim=1)
    check_same_shape("measured", measured_t, "wanted", wanted_t)
    if not scale > 0:
        raise ValueError(f"scale must be > 0 (the parent's standard deviation), got {scale!r}")
    return ((measured_t.double() - wanted_t.double()).abs() / scale).float()


def categorical_hits(predicted: Tensor, wanted: Tensor) -> Tensor:
    """1.0 where the predicted category equals the wanted one, else 0.0.

    Example:
        >>> categorical_hits(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3]))
        tensor([1., 0., 1.])
    """
    if predicted.shape != wanted.shape or predicted.dim() != 1:
        raise ValueError(
            f"predicted and wanted must be 1-D of one length, got {tuple(predicted.shape)} and {tuple(wanted.shape)}"
        )
    if predicted.is_floating_point() or wanted.is_floating_point():
        raise TypeError(f"categories must be integer tensors, got {predicted.dtype} and {wanted.dtype}")
    return (predicted == wanted).float()
