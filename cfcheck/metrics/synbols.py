"""Bex et al.'s latent-counterfactual metrics: EF, NCF, CF, SCE, the trivial rate and S#.

An explainer returns K latent counterfactuals z′ per input z (N×K×D). With ĥ the latent
classifier explained and h_causal the causal oracle (both given here as predicted labels):

* proximal P_r: every group of coordinates moved by at most its L1 radius (one radius per
  categorical embedding, one for the continuous attributes; Bex et al. appendix A.3.2);
* EF  (estimator flip, Eq. 3):  proximal ∧ ĥ(z′) ≠ ĥ(z);
* NCF (non-causal flip, Eq. 4): EF ∧ h_causal(z′) = h_causal(z);
* CF  (causal flip, Eq. 5):     proximal ∧ ĥ(z′) = ĥ(z) ∧ h_causal(z′) ≠ h_causal(z);
* SCE (successful, Eq. 6):      NCF ∨ CF;
* trivial (Table 2):            EF ∧ h_causal(z′) ≠ h_causal(z) (both flip: nothing learnt);
* S# (Eq. 7): the size of the greedy orthogonal/complementary subset of the SCEs (τ = 0.15).

The greedy set (Algorithm 1) sorts the candidates by the L1 norm of z′ − z (most proximal first,
ties in the given order), keeps the first, and admits each next one by the cosine similarity of
*perturbation features*: per categorical group softmax(−‖c′ − w_k‖₂ / t), t = 0.33, with the
original category's entry zeroed (Eqs. 12–13); for the continuous attributes z′_cont − z_cont.

The cosine and the admission rule, two choices where the paper's descriptions disagree, are
settings of the greedy set: :mod:`cfcheck.metrics.orthogonal_set` states both and their defaults.

Abstentions (``valid`` false) are in no category; every rate divides by the K counterfactuals
asked for, so abstaining never raises a rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_real, check_tensor
from cfcheck.metrics.orthogonal_set import TAU, Admission, Cosine, greedy_orthogonal_set

__all__ = [
    "CategoricalGroup",
    "FlipCategories",
    "LatentLayout",
    "SynbolsScores",
    "category_rates",
    "flip_categories",
    "greedy_orthogonal_set",
    "perturbation_features",
    "proximal",
    "synbols_scores",
]

#: Bex et al.'s softmax temperature of the categorical parts.
TEMPERATURE = 0.33


@dataclass(frozen=True)
class CategoricalGroup:
    """Latent coordinates that embed one categorical attribute.

    Attributes:
        name: the attribute ("character").
        columns: (start, stop) of its coordinates in z.
        embedding: M×d float table, row m = category m's embedding (d = stop − start), in the
            same (standardised) coordinates as z.
        radius: its L1 proximity radius (Bex et al.: the largest pairwise embedding distance).
    """

    name: str
    columns: tuple[int, int]
    embedding: Tensor
    radius: float

    def __post_init__(self) -> None:
        start, stop = self.columns
        table = check_float_tensor(f"{self.name}.embedding", self.embedding, ndim=2)
        if not 0 <= start < stop or table.shape[1] != stop - start or table.shape[0] < 2:
            raise ValueError(
                f"group {self.name!r}: columns {self.columns} need an M×{stop - start} embedding with "
                f"M ≥ 2 categories, got {tuple(table.shape)}"
            )
        check_real(f"{self.name}.radius", self.radius, minimum=0.0)


@dataclass(frozen=True)
class LatentLayout:
    """How a latent space splits into categorical embeddings and continuous attributes.

    Attributes:
        categorical: the embedded categorical attributes.
        continuous: (start, stop) of the continuous attributes' coordinates.
        continuous_radius: L1 proximity radius of the continuous part (Bex et al.: 1).
        temperature: softmax temperature t of Eq. 12 (0.33).

    The groups must be disjoint and cover every coordinate 0..D−1 of z.

    Example:
        >>> layout = LatentLayout((), (0, 2), continuous_radius=1.0)
        >>> layout.dim
        2
    """

    categorical: Sequence[CategoricalGroup]
    continuous: tuple[int, int]
    continuous_radius: float = 1.0
    temperature: float = TEMPERATURE
    dim: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "categorical", tuple(self.categorical))
        if not all(isinstance(g, CategoricalGroup) for g in self.categorical):
            raise TypeError("`categorical` must hold CategoricalGroup objects")
        check_real("continuous_radius", self.continuous_radius, minimum=0.0)
        if check_real("temperature", self.temperature) <= 0:
            raise ValueError(f"`temperature` must be > 0, got {self.temperature}")
        spans = sorted([g.columns for g in self.categorical] + [tuple(self.continuous)])
        if spans[0][0] != 0 or any(a[1] != b[0] for a, b in zip(spans, spans[1:])) or any(a >= b for a, b in spans):
            raise ValueError(f"the groups' columns must be disjoint, non-empty and cover 0..D−1, got {spans}")
        object.__setattr__(self, "dim", spans[-1][1])


def _check_latents(z: object, z_cf: object, layout: LatentLayout) -> tuple[Tensor, Tensor]:
    if not isinstance(layout, LatentLayout):
        raise TypeError(f"`layout` must be a LatentLayout, got {type(layout).__name__}")
    z = check_float_tensor("z", z, ndim=2)
    z_cf = check_float_tensor("z_cf", z_cf, ndim=3)
    if z.shape[1] != layout.dim or z_cf.shape[0] != z.shape[0] or z_cf.shape[2] != layout.dim:
        raise ValueError(
            f"`z` must be N×{layout.dim} and `z_cf` N×K×{layout.dim} (the layout's D), got "
            f"{tuple(z.shape)} and {tuple(z_cf.shape)}"
        )
    return z.double(), z_cf.double()


def _check_labels(name: str, value: object, shape: tuple[int, ...]) -> Tensor:
    tensor = check_tensor(name, value)
    if tensor.dtype != torch.int64 or tuple(tensor.shape) != shape:
        raise ValueError(f"`{name}` must be int64 labels of shape {shape}, got {tensor.dtype} {tuple(tensor.shape)}")
    return tensor


def proximal(z: Tensor, z_cf: Tensor, layout: LatentLayout) -> Tensor:
    """Whether each counterfactual lies in P_r(z): every group within its L1 radius.

    Args:
        z: N×D latents of the inputs.
        z_cf: N×K×D counterfactual latents.
        layout: the groups and their radii.

    Returns:
        bool N×K.

    Example:
        >>> layout = LatentLayout((), (0, 2), continuous_radius=1.0)
        >>> proximal(torch.zeros(1, 2), torch.tensor([[[0.5, 0.5], [1.0, 0.5]]]), layout).tolist()
        [[True, False]]
    """
    z, z_cf = _check_latents(z, z_cf, layout)
    moved = (z_cf - z[:, None, :]).abs()
    spans = [(g.columns, g.radius) for g in layout.categorical] + [(layout.continuous, layout.continuous_radius)]
    inside = torch.ones(z_cf.shape[:2], dtype=torch.bool)
    for (start, stop), radius in spans:
        inside &= moved[..., start:stop].sum(-1) <= radius
    return inside


@dataclass(frozen=True)
class FlipCategories:
    """bool N×K masks of Bex et al.'s categories (see the module docstring)."""

    ef: Tensor
    ncf: Tensor
    cf: Tensor
    sce: Tensor
    trivial: Tensor


def flip_categories(
    prediction: Tensor,
    prediction_cf: Tensor,
    causal: Tensor,
    causal_cf: Tensor,
    is_proximal: Tensor,
    valid: Tensor | None = None,
) -> FlipCategories:
    """EF, NCF, CF, SCE and trivial masks of N inputs' K counterfactuals.

    Args:
        prediction: int64 N, ĥ(z) (the explained latent classifier's labels of the inputs).
        prediction_cf: int64 N×K, ĥ(z′).
        causal: int64 N, h_causal(z).
        causal_cf: int64 N×K, h_causal(z′).
        is_proximal: bool N×K, from :func:`proximal`.
        valid: optional bool N×K, false where the method abstained (then in no category).

    Returns:
        The five masks.

    Example:
        >>> c = flip_categories(torch.tensor([0]), torch.tensor([[1, 0, 1]]), torch.tensor([0]),
        ...                     torch.tensor([[0, 1, 1]]), torch.ones(1, 3, dtype=torch.bool))
        >>> c.ncf.tolist(), c.cf.tolist(), c.trivial.tolist()
        ([[True, False, False]], [[False, True, False]], [[False, False, True]])
    """
    is_proximal = check_tensor("is_proximal", is_proximal)
    if is_proximal.dtype != torch.bool or is_proximal.ndim != 2:
        raise ValueError(f"`is_proximal` must be a bool N×K mask, got {is_proximal.dtype} {tuple(is_proximal.shape)}")
    n, k = is_proximal.shape
    prediction, causal = _check_labels("prediction", prediction, (n,)), _check_labels("causal", causal, (n,))
    prediction_cf = _check_labels("prediction_cf", prediction_cf, (n, k))
    causal_cf = _check_labels("causal_cf", causal_cf, (n, k))
    kept = is_proximal
    if valid is not None:
        valid = check_tensor("valid", valid)
        if valid.dtype != torch.bool or tuple(valid.shape) != (n, k):
            raise ValueError(f"`valid` must be a bool mask of shape {(n, k)}, got {valid.dtype} {tuple(valid.shape)}")
        kept = kept & valid
    estimator_flips = prediction_cf != prediction[:, None]
    causal_flips = causal_cf != causal[:, None]
    ef = kept & estimator_flips
    ncf = ef & ~causal_flips
    cf = kept & ~estimator_flips & causal_flips
    return FlipCategories(ef=ef, ncf=ncf, cf=cf, sce=ncf | cf, trivial=ef & causal_flips)


def category_rates(categories: FlipCategories) -> dict[str, Tensor]:
    """Per input, the share of its K counterfactuals in each category (float64 N each; keys
    ``ef``, ``ncf``, ``cf``, ``sce``, ``trivial``)."""
    return {name: getattr(categories, name).double().mean(1) for name in ("ef", "ncf", "cf", "sce", "trivial")}


def perturbation_features(z: Tensor, z_cf: Tensor, layout: LatentLayout) -> list[Tensor]:
    """The parts of each counterfactual's perturbation vector (Eqs. 12–13), in layout order.

    Args:
        z: N×D latents; z_cf: N×K×D counterfactual latents; layout: the groups.

    Returns:
        One float64 N×K×P tensor per categorical group (P = its number of categories:
        softmax(−‖c′ − w_m‖₂ / t) with the input's own category, its nearest embedding, zeroed),
        then the continuous part z′_cont − z_cont.

    Example:
        >>> layout = LatentLayout((), (0, 2))
        >>> perturbation_features(torch.zeros(1, 2), torch.ones(1, 1, 2), layout)[0].tolist()
        [[[1.0, 1.0]]]
    """
    z, z_cf = _check_latents(z, z_cf, layout)
    parts = []
    for group in layout.categorical:
        start, stop = group.columns
        table = group.embedding.double()
        original = torch.cdist(z[:, start:stop], table).argmin(1)
        distances = torch.cdist(z_cf[..., start:stop].reshape(-1, stop - start), table).reshape(*z_cf.shape[:2], -1)
        softmax = torch.softmax(-distances / layout.temperature, dim=-1)
        softmax[torch.arange(len(z))[:, None], :, original[:, None]] = 0.0
        parts.append(softmax)
    start, stop = layout.continuous
    parts.append(z_cf[..., start:stop] - z[:, None, start:stop])
    return parts


@dataclass(frozen=True)
class SynbolsScores:
    """Per-input scores of N inputs.

    Attributes:
        categories: the N×K masks (EF, NCF, CF, SCE, trivial).
        rates: per input, the share of its K counterfactuals in each category (float64 N).
        orthogonal_set: bool N×K, the SCEs kept by the greedy set.
        s_sharp: int64 N, S# = the size of each input's set.
    """

    categories: FlipCategories
    rates: dict[str, Tensor]
    orthogonal_set: Tensor
    s_sharp: Tensor


def synbols_scores(
    z: Tensor,
    z_cf: Tensor,
    layout: LatentLayout,
    prediction: Tensor,
    prediction_cf: Tensor,
    causal: Tensor,
    causal_cf: Tensor,
    *,
    valid: Tensor | None = None,
    tau: float = TAU,
    cosine: Cosine = "concatenated",
    admission: Admission = "each_member",
) -> SynbolsScores:
    """All of Bex et al.'s per-input scores for K latent counterfactuals of N inputs.

    Args:
        z: N×D input latents; z_cf: N×K×D counterfactuals; layout: groups, radii, temperature.
        prediction, prediction_cf: int64 ĥ labels of z (N) and z′ (N×K).
        causal, causal_cf: int64 h_causal labels of z (N) and z′ (N×K).
        valid: optional bool N×K, false where the method abstained.
        tau, cosine, admission: the greedy set's settings (:func:`greedy_orthogonal_set`).

    Returns:
        The categories, rates, the orthogonal set and S#.

    Example:
        >>> layout = LatentLayout((), (0, 2), continuous_radius=2.0)
        >>> z_cf = torch.tensor([[[0.5, 0.0], [0.0, 0.5], [0.0, 0.6]]])
        >>> s = synbols_scores(torch.zeros(1, 2), z_cf, layout, torch.tensor([0]), torch.ones(1, 3, dtype=torch.int64),
        ...                    torch.tensor([0]), torch.zeros(1, 3, dtype=torch.int64))
        >>> s.s_sharp.tolist(), s.rates["ncf"].tolist()
        ([2], [1.0])
    """
    z64, z_cf64 = _check_latents(z, z_cf, layout)
    categories = flip_categories(prediction, prediction_cf, causal, causal_cf, proximal(z, z_cf, layout), valid)
    parts = perturbation_features(z, z_cf, layout)
    order_norm = (z_cf64 - z64[:, None, :]).abs().sum(-1)
    kept = greedy_orthogonal_set(parts, order_norm, categories.sce, tau=tau, cosine=cosine, admission=admission)
    return SynbolsScores(categories, category_rates(categories), kept, kept.sum(1))
