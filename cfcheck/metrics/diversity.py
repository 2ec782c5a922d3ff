"""Diversity: how different are the several counterfactuals a method gives for one input?

Väth §3.4 proposes the mean pairwise LPIPS among an input's counterfactuals; the distance
is a parameter here so the same function serves perceptual and pixel distances.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_tensor, describe

__all__ = ["pairwise_diversity"]


def pairwise_diversity(cfs: Tensor, distance: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    """Mean distance over the K(K−1)/2 unordered pairs of each input's K counterfactuals.

    Args:
        cfs: N×K×C×H×W — K ≥ 2 counterfactuals for each of N inputs.
        distance: per-image distance ``(a, b) -> Tensor[N]`` on N×C×H×W batches, e.g.
            ``functools.partial(perceptual_distance, feature_maps=net)``; it should be
            symmetric, since only one order of each pair is evaluated.

    Returns:
        float32 tensor of length N.
    """
    cfs_t = check_float_tensor("cfs", cfs, ndim=5)
    if not callable(distance):
        raise TypeError(f"`distance` must be callable, got {describe(distance)}")
    batch, k = cfs_t.shape[0], cfs_t.shape[1]
    if k < 2:
        raise ValueError(f"`cfs` needs K >= 2 counterfactuals per input (N×K×C×H×W), got K={k}")
    total = torch.zeros(batch, dtype=torch.float64, device=cfs_t.device)
    for i in range(k):
        for j in range(i + 1, k):
            pair = check_tensor(f"distance(cfs[:, {i}], cfs[:, {j}])", distance(cfs_t[:, i], cfs_t[:, j]))
            if pair.shape != (batch,):
                raise ValueError(
                    f"`distance` must return one value per image, shape ({batch},), got {tuple(pair.shape)}"
                )
            total = total + pair.double()
    return (total / (k * (k - 1) / 2)).to(torch.float32)
