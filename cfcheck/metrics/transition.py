"""COUT, the counterfactual transition (Khorram & Fuxin 2022): does the decision move from the
source class to the target class as the counterfactual's changes are inserted into the input,
most-changed values first?

x_k is the input with the k/T largest changes |c − x| (over all C·H·W values, ties by position)
taken from the counterfactual, k = 0..T; the explained classifier's probabilities of the source
and of the target class along that path are integrated over the inserted fraction (trapezoid
rule), and COUT = AUC(target) − AUC(source) ∈ [−1, 1]: near 1 when a few of the largest changes
already flip the decision, near −1 when the decision never leaves the source class.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_image_pair, check_positive_int, check_predictions

__all__ = ["COUT_STEPS", "counterfactual_transition", "insertion_path"]

#: Insertion steps T (T + 1 classifier calls per input).
COUT_STEPS = 20


def insertion_path(x: Tensor, c: Tensor, steps: int = COUT_STEPS) -> Tensor:
    """N×(T+1)×C×H×W: step k is ``x`` with its ⌊k·D/T⌉ most-changed values (|c − x|, largest first,
    ties by position; D = C·H·W) replaced by those of ``c``; step 0 is x, step T is c.

    Example:
        >>> path = insertion_path(torch.zeros(1, 1, 1, 4), torch.tensor([[[[0.1, 0.4, 0.2, 0.3]]]]), steps=4)
        >>> path[0, :, 0, 0].tolist()[2]
        [0.0, 0.4000000059604645, 0.0, 0.30000001192092896]
    """
    x_t, c_t = check_image_pair(x, c, value_range=None)
    steps = check_positive_int("steps", steps)
    n, size = x_t.shape[0], x_t[0].numel()
    change = (c_t - x_t).abs().reshape(n, size)
    order = torch.argsort(change, dim=1, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(size).expand(n, size))
    counts = torch.round(torch.arange(steps + 1, dtype=torch.float64) * size / steps).long()
    inserted = rank[:, None, :] < counts[None, :, None]  # N×(T+1)×D
    flat = torch.where(inserted, c_t.reshape(n, 1, size), x_t.reshape(n, 1, size))
    return flat.reshape(n, steps + 1, *x_t.shape[1:])


def counterfactual_transition(
    x: Tensor,
    c: Tensor,
    source: Tensor,
    target: Tensor,
    probabilities: Callable[[Tensor], Tensor],
    *,
    steps: int = COUT_STEPS,
) -> Tensor:
    """COUT per input, float32 N in [−1, 1].

    Args:
        x, c: inputs and their counterfactuals, N×C×H×W.
        source: int64 N, the class each input is explained from (the classifier's prediction).
        target: int64 N, the requested class.
        probabilities: maps an image batch M×C×H×W to M×K class probabilities of the explained
            classifier (called once, on all N·(T+1) images of the insertion paths).
        steps: insertion steps T.

    Returns:
        AUC_k p(target | x_k) − AUC_k p(source | x_k) per input, k/T ∈ [0, 1], trapezoid rule.

    Raises:
        ValueError: for mismatched shapes, labels out of range, or probabilities of the wrong shape.

    Example:
        >>> def prob(images):  # class 1 with probability = mean brightness
        ...     p1 = images.flatten(1).mean(1)
        ...     return torch.stack([1 - p1, p1], 1)
        >>> x, c = torch.zeros(1, 1, 2, 2), torch.ones(1, 1, 2, 2)
        >>> round(float(counterfactual_transition(x, c, torch.tensor([0]), torch.tensor([1]), prob, steps=4)), 6)
        0.0
    """
    path = insertion_path(x, c, steps)
    n, points = path.shape[:2]
    probs = probabilities(path.reshape(n * points, *path.shape[2:]))
    if not isinstance(probs, Tensor) or probs.ndim != 2 or probs.shape[0] != n * points:
        raise ValueError(
            f"`probabilities` must return an M×K tensor for M = {n * points} images, got "
            f"{getattr(probs, 'shape', type(probs).__name__)}"
        )
    classes = probs.shape[1]
    source_t = check_predictions("source", source, num_classes=classes)
    target_t = check_predictions("target", target, num_classes=classes)
    if source_t.shape[0] != n or target_t.shape[0] != n:
        raise ValueError(
            f"`source` and `target` must have N = {n} entries, got {source_t.shape[0]} and {target_t.shape[0]}"
        )
    curves = probs.double().reshape(n, points, classes)
    gap = curves.gather(2, target_t[:, None, None].expand(n, points, 1)) - curves.gather(
        2, source_t[:, None, None].expand(n, points, 1)
    )
    gap = gap[:, :, 0]
    auc = (gap[:, 1:] + gap[:, :-1]).sum(1) / (2 * steps)  # trapezoid rule on k/T
    return auc.to(torch.float32)
