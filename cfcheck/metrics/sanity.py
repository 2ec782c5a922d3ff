"""Random-classifier sanity (Väth H2; Adebayo et al. 2018 model-parameter randomisation).

An explainer that ignores the classifier passes validity tests for free. Two checks expose
it: explaining a randomly initialised classifier (RandomNet) must not make the oracles see
the target class more often than they already do on the unchanged inputs (OTA gain ≈ 0),
and the counterfactuals for the trained and the randomised classifier must differ.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import rankdata
from torch import Tensor

from cfcheck.metrics._validation import check_image_pair, check_same_shape, check_tensor
from cfcheck.metrics.closeness import UNIT_RANGE

__all__ = ["ota_gain", "randomisation_similarity"]


def ota_gain(cf_hits: Tensor, x_hits: Tensor) -> Tensor:
    """Per image ``hit(c) − hit(x)`` ∈ {−1, 0, 1}, from oracle target-hit indicators (e.g.
    :func:`~cfcheck.metrics.validity.committee_target_hits` on the counterfactuals and on the
    unchanged inputs); its mean is the OTA gain.

    Per-image differences (rather than a difference of two means) keep the pairing, so
    the bootstrap CI of the gain accounts for the correlation between c and x.
    """
    cf_t = check_tensor("cf_hits", cf_hits)
    x_t = check_tensor("x_hits", x_hits)
    check_same_shape("cf_hits", cf_t, "x_hits", x_t)
    for name, hits in (("cf_hits", cf_t), ("x_hits", x_t)):
        if hits.ndim != 1 or not bool(((hits == 0) | (hits == 1)).all()):
            raise ValueError(f"`{name}` must be a 1-D tensor of 0/1 indicators")
    return cf_t.to(torch.float32) - x_t.to(torch.float32)


def randomisation_similarity(x: Tensor, cf_trained: Tensor, cf_random: Tensor) -> Tensor:
    """Spearman rank correlation, per image, of |c_trained − x| and |c_random − x|.

    The absolute change maps play the role of saliency maps in Adebayo et al.'s model
    randomisation test (their "Spearman rank correlation (ABS)"); ranks use average ties,
    because unchanged pixels tie at zero. Near 1 means the explanation barely depends on
    the classifier's parameters. Undefined (NaN) when either map is constant, e.g. when a
    method returned the input unchanged; callers exclude NaNs and report coverage.
    """
    x_t, trained = check_image_pair(x, cf_trained, value_range=UNIT_RANGE, names=("x", "cf_trained"))
    _, random = check_image_pair(x, cf_random, value_range=UNIT_RANGE, names=("x", "cf_random"))
    return rank_similarity(trained.double() - x_t.double(), random.double() - x_t.double())


def rank_similarity(first: Tensor, second: Tensor) -> Tensor:
    """Spearman rank correlation, per sample, of |first| and |second| (N×…, any values).

    Args:
        first: N×… maps (saliency maps, change maps).
        second: maps of the same shape.

    Returns:
        float32 N on ``first``'s device; NaN where either map is constant.

    Example:
        >>> rank_similarity(torch.tensor([[1.0, -2.0, 3.0]]), torch.tensor([[2.0, 4.0, 9.0]]))
        tensor([1.])
    """
    if not isinstance(first, Tensor) or not isinstance(second, Tensor):
        raise TypeError(f"Expected two tensors, got {type(first).__name__} and {type(second).__name__}")
    if first.shape != second.shape or first.ndim < 2:
        raise ValueError(f"Expected two N×… maps of one shape, got {tuple(first.shape)} and {tuple(second.shape)}")
    a = first.detach().double().abs().flatten(start_dim=1).cpu().numpy()
    b = second.detach().double().abs().flatten(start_dim=1).cpu().numpy()
    ranks_a = rankdata(a, axis=1)
    ranks_b = rankdata(b, axis=1)
    centred_a = ranks_a - ranks_a.mean(axis=1, keepdims=True)
    centred_b = ranks_b - ranks_b.mean(axis=1, keepdims=True)
    numerator = (centred_a * centred_b).sum(axis=1)
    denominator = np.sqrt((centred_a**2).sum(axis=1) * (centred_b**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)
    return torch.from_numpy(np.clip(rho, -1.0, 1.0)).to(device=first.device, dtype=torch.float32)
