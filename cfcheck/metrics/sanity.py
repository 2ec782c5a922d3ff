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

from cfcheck.metrics._validation import check_image_pair, check_same_shape
from cfcheck.metrics.closeness import UNIT_RANGE
from cfcheck.metrics.validity import oracle_target_hits

__all__ = ["ota_gain", "randomisation_similarity"]


def ota_gain(
    oracle_cf_pred: Tensor, oracle_x_pred: Tensor, target: Tensor, *, num_classes: int | None = None
) -> Tensor:
    """Per image 1[f_o(c) = y_t] − 1[f_o(x) = y_t] ∈ {−1, 0, 1}; its mean is the OTA gain.

    Per-image differences (rather than a difference of two means) keep the pairing, so
    the bootstrap CI of the gain accounts for the correlation between c and x.
    """
    cf_hits = oracle_target_hits(oracle_cf_pred, target, num_classes=num_classes)
    x_hits = oracle_target_hits(oracle_x_pred, target, num_classes=num_classes)
    check_same_shape("oracle_cf_pred", cf_hits, "oracle_x_pred", x_hits)
    return cf_hits - x_hits


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
    change_trained = (trained.double() - x_t.double()).abs().flatten(start_dim=1).cpu().numpy()
    change_random = (random.double() - x_t.double()).abs().flatten(start_dim=1).cpu().numpy()
    ranks_trained = rankdata(change_trained, axis=1)
    ranks_random = rankdata(change_random, axis=1)
    centred_t = ranks_trained - ranks_trained.mean(axis=1, keepdims=True)
    centred_r = ranks_random - ranks_random.mean(axis=1, keepdims=True)
    numerator = (centred_t * centred_r).sum(axis=1)
    denominator = np.sqrt((centred_t**2).sum(axis=1) * (centred_r**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)
    return torch.from_numpy(np.clip(rho, -1.0, 1.0)).to(device=x_t.device, dtype=torch.float32)
