"""Validity metrics: does the counterfactual land in the target class, for whom?

Per-sample indicators following Väth et al. 2023 §3.1 (TA, OA, OS, OTA) and Hvilshøj et
al. 2021 §3 (TCV, LVS). Each function returns one float32 value per image so scores are
averaged per image and can be bootstrapped; the caller runs the models and passes their
predictions, which keeps the metrics pure and model-agnostic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from cfcheck.metrics._validation import (
    check_num_classes,
    check_predictions,
    check_probabilities,
    check_same_length,
    check_same_shape,
)

__all__ = [
    "class_changes",
    "committee_target_hits",
    "js_divergence",
    "label_variation",
    "label_variation_toward",
    "oracle_agreement",
    "oracle_target_hits",
    "original_hits",
    "target_hits",
]


def _indicator(name_a: str, a: object, name_b: str, b: object, *, equal: bool, num_classes: int | None) -> Tensor:
    classes = check_num_classes(num_classes)
    a_t = check_predictions(name_a, a, num_classes=classes)
    b_t = check_predictions(name_b, b, num_classes=classes)
    check_same_length(**{name_a: a_t, name_b: b_t})
    hits = a_t == b_t if equal else a_t != b_t
    return hits.to(torch.float32)


def target_hits(cf_pred: Tensor, target: Tensor, *, num_classes: int | None = None) -> Tensor:
    """TA per image: 1[f(c) = y_t] (Väth §3.1)."""
    return _indicator("cf_pred", cf_pred, "target", target, equal=True, num_classes=num_classes)


def original_hits(cf_pred: Tensor, original_pred: Tensor, *, num_classes: int | None = None) -> Tensor:
    """OA per image: 1[f(c) = y] with y = f(x); the change was too small to flip f (Väth §3.1)."""
    return _indicator("cf_pred", cf_pred, "original_pred", original_pred, equal=True, num_classes=num_classes)


def class_changes(cf_pred: Tensor, original_pred: Tensor, *, num_classes: int | None = None) -> Tensor:
    """TCV per image: 1[f(c) ≠ f(x)] (Hvilshøj eq. 1); any flip counts, not only to y_t."""
    return _indicator("cf_pred", cf_pred, "original_pred", original_pred, equal=False, num_classes=num_classes)


def oracle_agreement(cf_pred: Tensor, oracle_cf_pred: Tensor, *, num_classes: int | None = None) -> Tensor:
    """OS per image: 1[f(c) = f_o(c)]; an adversarial flip of f alone scores 0 (Hvilshøj eq. 6)."""
    return _indicator("cf_pred", cf_pred, "oracle_cf_pred", oracle_cf_pred, equal=True, num_classes=num_classes)


def oracle_target_hits(oracle_cf_pred: Tensor, target: Tensor, *, num_classes: int | None = None) -> Tensor:
    """OTA per image: 1[f_o(c) = y_t]; the independent oracle sees the target class (Väth §3.1)."""
    return _indicator("oracle_cf_pred", oracle_cf_pred, "target", target, equal=True, num_classes=num_classes)


def committee_target_hits(member_preds: Sequence[Tensor] | Tensor, target: Tensor) -> Tensor:
    """Committee OTA per image: 1 when a strict majority of the M members predicts ``target``.

    ``#{m : pred_m = y_t} > M/2``; a tie or a plurality short of a majority counts as a miss.
    One fooled member can therefore never decide the vote (with M = 3, two must agree), which a
    soft vote (mean probability) cannot promise: one over-confident fooled member outweighs two
    unsure correct ones.

    Args:
        member_preds: M ≥ 1 int64 tensors of shape N (each member's predicted class), or an
            M×N tensor.
        target: int64 tensor of shape N.

    Returns:
        float32 tensor of shape N with values in {0, 1}.

    Example:
        >>> committee_target_hits([torch.tensor([1, 1]), torch.tensor([1, 2]), torch.tensor([0, 2])],
        ...                       torch.tensor([1, 1])).tolist()
        [1.0, 0.0]
    """
    if isinstance(member_preds, Tensor):
        if member_preds.ndim != 2:
            raise ValueError(f"`member_preds` as one tensor must be M×N, got shape {tuple(member_preds.shape)}")
        member_preds = list(member_preds.unbind(0))
    if not isinstance(member_preds, Sequence) or len(member_preds) == 0:
        raise ValueError("`member_preds` must hold at least one committee member's predictions")
    target_t = check_predictions("target", target)
    votes = torch.zeros(target_t.shape, dtype=torch.int64, device=target_t.device)
    for i, preds in enumerate(member_preds):
        preds_t = check_predictions(f"member_preds[{i}]", preds)
        check_same_length(**{f"member_preds[{i}]": preds_t, "target": target_t})
        votes += (preds_t == target_t).to(torch.int64)
    return (2 * votes > len(member_preds)).to(torch.float32)


def js_divergence(p: Tensor, q: Tensor) -> Tensor:
    """Jensen–Shannon divergence between matching rows of two N×K probability matrices.

    JS(p‖q) = ½ KL(p‖m) + ½ KL(q‖m) with m = ½(p+q), in bits (log base 2) so it lies in
    [0, 1]. Zero probabilities are handled with 0·log 0 = 0 (``xlogy``); m > 0 wherever p
    or q is, so no term is infinite. Computed in float64, returned as float32.
    """
    p_t = check_probabilities("p", p)
    q_t = check_probabilities("q", q)
    check_same_shape("p", p_t, "q", q_t)
    p64 = p_t.double()
    q64 = q_t.double()
    # Renormalise the tolerated rounding error so the [0, 1] bound is exact.
    p64 = p64 / p64.sum(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)
    q64 = q64 / q64.sum(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)
    m64 = 0.5 * (p64 + q64)
    kl_pm = (torch.xlogy(p64, p64) - torch.xlogy(p64, m64)).sum(dim=1)
    kl_qm = (torch.xlogy(q64, q64) - torch.xlogy(q64, m64)).sum(dim=1)
    js_bits = 0.5 * (kl_pm + kl_qm) / math.log(2.0)
    return js_bits.clamp(0.0, 1.0).to(torch.float32)


def label_variation(oracle_probs_x: Tensor, oracle_probs_cf: Tensor) -> Tensor:
    """LVS_l per image: JS(o_l(x) ‖ o_l(c)) for one attribute oracle o_l (Hvilshøj eq. 5).

    Low for attributes the counterfactual should leave alone, high for the one it should
    change; the mean over images is LVS_l.
    """
    p_t = check_probabilities("oracle_probs_x", oracle_probs_x)
    q_t = check_probabilities("oracle_probs_cf", oracle_probs_cf)
    check_same_shape("oracle_probs_x", p_t, "oracle_probs_cf", q_t)
    return js_divergence(p_t, q_t)


def label_variation_toward(oracle_probs_x: Tensor, oracle_probs_cf: Tensor, target: Tensor) -> Tensor:
    """LVS toward the target, per image: JS(o(x) ‖ o(c)) where the class-attribute oracle o reads
    the target class on the counterfactual (argmax o(c) = y_t), else 0.

    Hvilshøj's LVS (eq. 5, :func:`label_variation`) rewards any change of the oracle's belief, so
    uniform noise, which moves it away from the source class but toward no class in particular,
    scores nearly as high as the true counterfactual. Counting the change only where it lands on
    the target makes the score a share of right counterfactuals weighted by how surely the oracle
    changed its mind: a mixture of the truth (share s) and the unchanged input scores about s
    times the truth's value.

    Args:
        oracle_probs_x: N×K probabilities of the class-attribute oracle on the inputs.
        oracle_probs_cf: N×K probabilities on the counterfactuals.
        target: int64 N target classes in [0, K).

    Returns:
        float32 N in [0, 1] (bits).

    Example:
        >>> p = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
        >>> q = torch.tensor([[0.0, 1.0], [0.0, 1.0]])
        >>> label_variation_toward(p, q, torch.tensor([1, 0]))
        tensor([1., 0.])
    """
    p_t = check_probabilities("oracle_probs_x", oracle_probs_x)
    q_t = check_probabilities("oracle_probs_cf", oracle_probs_cf)
    check_same_shape("oracle_probs_x", p_t, "oracle_probs_cf", q_t)
    target_t = check_predictions("target", target, num_classes=q_t.shape[1])
    check_same_length(oracle_probs_cf=q_t, target=target_t)
    reached = q_t.argmax(dim=1) == target_t.to(q_t.device)
    return torch.where(reached, js_divergence(p_t, q_t), torch.zeros((), dtype=torch.float32, device=q_t.device))
