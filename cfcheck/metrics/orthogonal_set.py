"""S#'s greedy orthogonal/complementary set (Bex et al., Algorithm 1) of K counterfactuals per input.

Given each counterfactual's perturbation features (for latent counterfactuals,
:func:`cfcheck.metrics.synbols.perturbation_features`), the set sorts the candidates by a proximity
key (most proximal first, ties in the given order), keeps the first, and admits each next one by the
cosine similarity of its features to the set's members (threshold τ = 0.15). S# is the size of the
set of an input's successful counterfactuals (:func:`cfcheck.metrics.synbols.synbols_scores`).

Two choices where the paper's descriptions disagree (both selectable, defaults documented):

* ``cosine="concatenated"`` (default): one cosine between the concatenated feature vectors, as
  Algorithm 1 computes it on one perturbation vector per counterfactual. ``"summed"`` adds one
  cosine per part instead: one per categorical attribute, then the continuous part (three on
  a domain with two categorical attributes: character, font, continuous). Neither is the reference code's cosine,
  which adds two: one over all categorical parts together and one over the continuous part
  (the S# card records it). Under either sum a part that neither counterfactual changes still
  has identical residual softmax vectors (cosine ≈ 1), so two counterfactuals that move
  different continuous attributes are never orthogonal; the concatenated cosine weighs each
  part by the size of its change.
* ``admission="each_member"`` (default): a candidate is admitted when it is orthogonal
  (|cos| < τ) or complementary (cos + 1 < τ) to *every* member of the set, as §3.4's text says.
  Algorithm 1's listing admits it when it is orthogonal to all members *or* complementary to
  any (``"algorithm1"``), which also admits a repeat of a member's complement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_real, check_tensor

__all__ = ["TAU", "Admission", "Cosine", "greedy_orthogonal_set"]

#: Bex et al.'s orthogonality threshold.
TAU = 0.15
Cosine = Literal["concatenated", "summed"]
Admission = Literal["each_member", "algorithm1"]


def _check_tau(tau: object) -> float:
    tau = check_real("tau", tau)
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"`tau` must be in (0, 1], got {tau}")
    return tau


def _cosines(parts: Sequence[Tensor], cosine: Cosine) -> Tensor:
    """N×K×K cosine similarities between the counterfactuals' features (0 against a zero vector)."""

    def matrix(features: Tensor) -> Tensor:
        norms = features.norm(dim=-1, keepdim=True)
        unit = torch.where(norms > 0, features / norms.clamp_min(1e-300), torch.zeros_like(features))
        return unit @ unit.transpose(1, 2)

    if cosine == "concatenated":
        return matrix(torch.cat(list(parts), dim=-1))
    if cosine == "summed":
        return torch.stack([matrix(p) for p in parts]).sum(0)
    raise ValueError(f"`cosine` must be 'concatenated' or 'summed', got {cosine!r}")


def greedy_orthogonal_set(
    parts: Sequence[Tensor],
    order_norm: Tensor,
    candidates: Tensor,
    *,
    tau: float = TAU,
    cosine: Cosine = "concatenated",
    admission: Admission = "each_member",
) -> Tensor:
    """Bex et al.'s greedy orthogonal/complementary subset of each input's candidates.

    Args:
        parts: perturbation feature parts, each float N×K×P (from :func:`perturbation_features`).
        order_norm: float N×K, the sort key (most proximal first; ties keep the given order).
        candidates: bool N×K, which counterfactuals may enter (the SCEs for S#).
        tau: the threshold τ in (0, 1]: orthogonal when |cos| < τ, complementary when cos + 1 < τ.
        cosine: "concatenated" or "summed" (see the module docstring).
        admission: "each_member" or "algorithm1" (see the module docstring).

    Returns:
        bool N×K, the members of each input's set (S# is its row sum). A candidate whose
        features are all zero (no perturbation) is never admitted: it has no direction, and a
        cosine of 0 would make it "orthogonal" to everything.

    Example:
        >>> e = torch.eye(2, dtype=torch.float64)[None]
        >>> kept = greedy_orthogonal_set([torch.cat([e, -e], 1)], torch.ones(1, 4), torch.ones(1, 4, dtype=torch.bool))
        >>> kept.sum().item()
        4
    """
    tau = _check_tau(tau)
    if admission not in ("each_member", "algorithm1"):
        raise ValueError(f"`admission` must be 'each_member' or 'algorithm1', got {admission!r}")
    candidates = check_tensor("candidates", candidates)
    if candidates.dtype != torch.bool or candidates.ndim != 2:
        raise ValueError(f"`candidates` must be a bool N×K mask, got {candidates.dtype} {tuple(candidates.shape)}")
    if not parts:
        raise ValueError("`parts` must hold at least one feature part")
    for i, part in enumerate(parts):
        part = check_float_tensor(f"parts[{i}]", part, ndim=3)
        if part.shape[:2] != candidates.shape:
            raise ValueError(
                f"`parts[{i}]` must be N×K×P with N×K = {tuple(candidates.shape)}, got {tuple(part.shape)}"
            )
    order_norm = check_float_tensor("order_norm", order_norm, ndim=2)
    if order_norm.shape != candidates.shape:
        raise ValueError(f"`order_norm` must have the shape of `candidates` {tuple(candidates.shape)}")
    n, k = candidates.shape
    order = torch.sort(order_norm.double(), dim=1, stable=True).indices
    rows = torch.arange(n)[:, None]
    sims = _cosines([p.double() for p in parts], cosine)[rows[:, :, None], order[:, :, None], order[:, None, :]]
    moved = torch.cat([p.double() for p in parts], dim=-1).abs().sum(-1) > 0  # a zero vector has no direction
    admissible = (candidates & moved)[rows, order]
    kept = torch.zeros(n, k, dtype=torch.bool)
    for j in range(k):
        sim, members = sims[:, j, :j], kept[:, :j]
        orthogonal, complementary = sim.abs() < tau, sim < tau - 1.0
        if admission == "each_member":
            ok = ((orthogonal | complementary) | ~members).all(1)
        else:
            ok = (orthogonal | ~members).all(1) | (complementary & members).any(1)
        kept[:, j] = admissible[:, j] & ok
    result = torch.zeros_like(kept)
    result[rows, order] = kept
    return result
