"""Composition of SCM counterfactuals in an embedding space (Melistas et al. 2024 §3.1, Table 1).

Besides pixels and LPIPS, Melistas et al. compare x and its m-cycle null-intervention image in the
space of the anti-causal predictors' last layers, concatenated. Pure function; the suite embeds.
"""

from __future__ import annotations

import torch  # noqa: F401  (the doctest examples)
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_same_shape

__all__ = ["embedding_l1"]


def embedding_l1(a: Tensor, b: Tensor) -> Tensor:
    """Mean absolute difference per row between two batches of embeddings (N×D → N, float64).

    Args:
        a: N×D embeddings of the inputs.
        b: N×D embeddings of their compositions (same shape).

    Returns:
        ``mean_k |a_nk − b_nk|`` for each row n.

    Raises:
        TypeError: for non-float tensors.
        ValueError: for other than 2-D inputs, different shapes, zero columns or non-finite values.

    Example:
        >>> embedding_l1(torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 3.0]]))
        tensor([1.5000], dtype=torch.float64)
    """
    a_t = check_float_tensor("a", a, ndim=2)
    b_t = check_float_tensor("b", b, ndim=2)
    check_same_shape("a", a_t, "b", b_t)
    if a_t.shape[1] == 0:
        raise ValueError("`a` and `b` must have at least one column (embedding dimension)")
    return (a_t.double() - b_t.double()).abs().mean(1)
