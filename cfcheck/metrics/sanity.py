"""Random-classifier sanity (Väth H2; Adebayo et al. 2018 model-parameter randomisation).

An explainer that ignores the classifier passes validity tests for free. Two checks expose
it: explaining a randomly initialised classifier (RandomNet) must not make the oracles see
the target class more often than they already do on the unchanged inputs (OTA gain ≈ 0),
and the counterfactuals for the trained and the randomised classifier must differ.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from cfcheck.metrics._validation import check_image_pair, check_same_shape, check_tensor
from cfcheck.metrics.closeness import UNIT_RANGE

__all__ = ["SUPPORTS", "average_ranks", "ota_gain", "randomisation_similarity", "rank_similarity", "same_ranking"]


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


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..M within each row of an N×M array, tied values sharing the mean of their ranks
    (``scipy.stats.rankdata(values, axis=1)``'s "average" method, without importing scipy.stats,
    which costs a quick run more than half a second).

    Example:
        >>> average_ranks(np.array([[0.0, 3.0, 0.0, 1.0]]))
        array([[1.5, 4. , 1.5, 3. ]])
    """
    if not isinstance(values, np.ndarray) or values.ndim != 2:
        raise ValueError(f"Expected a 2-D numpy array, got {type(values).__name__} {getattr(values, 'shape', '')}")
    if np.isnan(values).any():
        raise ValueError("`values` contains NaN, which has no rank")
    order = np.argsort(values, axis=1)  # ties share their run's mean rank, so their order does not matter
    ordered = np.take_along_axis(values, order, axis=1)
    positions = np.broadcast_to(np.arange(values.shape[1]), values.shape)
    starts_run = np.ones(values.shape, dtype=bool)
    starts_run[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends_run = np.ones(values.shape, dtype=bool)
    ends_run[:, :-1] = starts_run[:, 1:]
    # each position's run of equal values spans [first, last]; its rank is their mean, 1-based
    first = np.maximum.accumulate(np.where(starts_run, positions, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends_run, positions, values.shape[1])[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(values.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


#: what :func:`rank_similarity` correlates: every element, or only where either map is non-zero
SUPPORTS = ("all", "nonzero")


def rank_similarity(first: Tensor, second: Tensor, support: str = "all") -> Tensor:
    """Spearman rank correlation, per sample, of |first| and |second| (N×…, any values).

    With ``support="nonzero"`` each sample's correlation is taken over the elements where
    |first| or |second| is non-zero only. Elements where both maps are exactly 0 (for an
    input-times-gradient or integrated-gradients map with a zero baseline: every pixel where
    the input is 0, whatever the model) tie at the bottom of both rankings and pull the plain
    correlation towards 1; the support variant ignores them, so adding shared zeros changes it
    not at all.

    Args:
        first: N×… maps (saliency maps, change maps), N ≥ 1, at least one element per sample.
        second: maps of the same shape.
        support: ``"all"`` (every element) or ``"nonzero"`` (the union of the maps' non-zero
            elements, per sample).

    Returns:
        float32 N on ``first``'s device. NaN where the correlation is undefined: where either
        map is constant on the elements compared, and (``"nonzero"``) where fewer than two
        elements are non-zero in either map (both maps zero, or one shared non-zero element).

    Example:
        >>> rank_similarity(torch.tensor([[1.0, -2.0, 3.0]]), torch.tensor([[2.0, 4.0, 9.0]]))
        tensor([1.])
        >>> first = torch.tensor([[0.0, 0.0, 0.0, 1.0, 2.0, 3.0]])
        >>> second = torch.tensor([[0.0, 0.0, 0.0, 3.0, 2.0, 1.0]])
        >>> rank_similarity(first, second), rank_similarity(first, second, support="nonzero")
        (tensor([0.7419]), tensor([-1.]))
    """
    a, b = _absolute_rows(first, second)
    if support not in SUPPORTS:
        raise ValueError(f"`support` must be one of {SUPPORTS}, got {support!r}")
    if support == "all":
        rho = _spearman_rows(a, b)
    else:
        rho = np.full(len(a), np.nan)
        for i, (row_a, row_b) in enumerate(zip(a, b)):
            kept = (row_a != 0) | (row_b != 0)
            if int(kept.sum()) >= 2:
                rho[i] = _spearman_rows(row_a[None, kept], row_b[None, kept])[0]
    return torch.from_numpy(rho).to(device=first.device, dtype=torch.float32)


def same_ranking(first: Tensor, second: Tensor) -> Tensor:
    """Whether |first| and |second| order each sample's elements identically, ties included
    (equal average ranks): the verdict on a pair whose :func:`rank_similarity` is undefined.
    Two constant maps rank alike (True); a constant map and a varying one do not (False).

    Args:
        first: N×… maps.
        second: maps of the same shape.

    Returns:
        bool N on ``first``'s device.

    Example:
        >>> same_ranking(torch.tensor([[0.0, 0.0], [0.0, 1.0]]), torch.tensor([[0.0, 0.0], [0.0, 0.0]]))
        tensor([ True, False])
    """
    a, b = _absolute_rows(first, second)
    same = (average_ranks(a) == average_ranks(b)).all(axis=1)
    return torch.from_numpy(same).to(first.device)


def _absolute_rows(first: Tensor, second: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """|first| and |second| as N×M float64 arrays, after checking they are two maps of one shape."""
    if not isinstance(first, Tensor) or not isinstance(second, Tensor):
        raise TypeError(f"Expected two tensors, got {type(first).__name__} and {type(second).__name__}")
    if first.shape != second.shape or first.ndim < 2 or first.numel() == 0:
        raise ValueError(
            f"Expected two non-empty N×… maps of one shape, got {tuple(first.shape)} and {tuple(second.shape)}"
        )
    a = first.detach().double().abs().flatten(start_dim=1).cpu().numpy()
    b = second.detach().double().abs().flatten(start_dim=1).cpu().numpy()
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("the maps contain NaN, which has no rank")
    return a, b


def _spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of the rows' average ranks; NaN where either row is constant."""
    ranks_a = average_ranks(a)
    ranks_b = average_ranks(b)
    centred_a = ranks_a - ranks_a.mean(axis=1, keepdims=True)
    centred_b = ranks_b - ranks_b.mean(axis=1, keepdims=True)
    numerator = (centred_a * centred_b).sum(axis=1)
    denominator = np.sqrt((centred_a**2).sum(axis=1) * (centred_b**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)
    return np.clip(rho, -1.0, 1.0)
