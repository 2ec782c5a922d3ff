"""Closeness metrics: how far is each counterfactual from its input?

Pixel-space Minkowski distances and the elastic net (Väth §3.2, Hvilshøj §3.1), and the
LPIPS construction on a domain feature network (Zhang et al. 2018, used by Väth §3.2).
All are computed per image over all of its pixels and returned as float32 tensors of
length N; averaging is left to the caller so that per-image values can be bootstrapped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from cfcheck.metrics._optional import require
from cfcheck.metrics._validation import check_image_pair, check_real, check_tensor, describe

__all__ = [
    "attribute_changes",
    "elastic_net_distance",
    "ground_truth_error",
    "ground_truth_relative_error",
    "lpips_distance",
    "minkowski_distance",
    "perceptual_distance",
]

UNIT_RANGE: tuple[float, float] = (0.0, 1.0)
"""Images are float tensors in [0, 1]; distances are only comparable under one normalisation."""

FeatureMaps = Callable[[Tensor], Sequence[Tensor]]

_LPIPS_NETS = ("alex", "vgg", "squeeze")


def minkowski_distance(
    x: Tensor, c: Tensor, p: float, *, value_range: tuple[float, float] | None = UNIT_RANGE
) -> Tensor:
    """D_p per image: ‖x − c‖_p over all pixels of each image (p ≥ 1; ``math.inf`` = max-norm).

    Args:
        x, c: image batches N×… of the same shape, floating point, in ``value_range``.
        p: order of the norm; p < 1 is not a norm (no triangle inequality) and is refused.
        value_range: inclusive range the images must lie in; ``None`` skips the check.
    """
    order = check_real("p", p, minimum=1.0, allow_inf=True)
    x_t, c_t = check_image_pair(x, c, value_range=value_range)
    delta = (x_t.double() - c_t.double()).flatten(start_dim=1)
    return torch.linalg.vector_norm(delta, ord=order, dim=1).to(torch.float32)


def elastic_net_distance(x: Tensor, c: Tensor, *, value_range: tuple[float, float] | None = UNIT_RANGE) -> Tensor:
    """EN per image: ‖x − c‖₁ + ‖x − c‖₂ (Hvilshøj §3.1), the objective of gradient CF methods."""
    x_t, c_t = check_image_pair(x, c, value_range=value_range)
    delta = (x_t.double() - c_t.double()).flatten(start_dim=1)
    l1 = torch.linalg.vector_norm(delta, ord=1, dim=1)
    l2 = torch.linalg.vector_norm(delta, ord=2, dim=1)
    return (l1 + l2).to(torch.float32)


def _unit_normalise(features: Tensor, eps: float) -> Tensor:
    """Scale each spatial position's channel vector to unit length (zero vectors stay zero)."""
    norm = features.pow(2).sum(dim=1, keepdim=True).sqrt()
    return features / (norm + eps)


def _check_feature_maps(name: str, maps: object, batch: int) -> list[Tensor]:
    if isinstance(maps, Tensor) or not isinstance(maps, Sequence) or len(maps) == 0:
        raise TypeError(f"`feature_maps({name})` must return a non-empty list of N×C×H×W tensors, got {describe(maps)}")
    checked = []
    for layer, fmap in enumerate(maps):
        # Finiteness is checked on the per-layer distances instead: a full isfinite pass
        # over every activation costs as much as the distance itself.
        tensor = check_tensor(f"feature_maps({name})[{layer}]", fmap)
        if not tensor.is_floating_point():
            raise TypeError(f"`feature_maps({name})[{layer}]` must be floating point, got {tensor.dtype}")
        if tensor.ndim != 4:
            raise ValueError(f"`feature_maps({name})[{layer}]` must be 4-D (N×C×H×W), got shape {tuple(tensor.shape)}")
        if tensor.shape[0] != batch:
            raise ValueError(
                f"`feature_maps({name})[{layer}]` must have batch size {batch}, got shape {tuple(tensor.shape)}"
            )
        checked.append(tensor)
    return checked


def perceptual_distance(
    x: Tensor,
    c: Tensor,
    feature_maps: FeatureMaps,
    *,
    eps: float = 1e-10,
    value_range: tuple[float, float] | None = UNIT_RANGE,
) -> Tensor:
    """LPIPS formula on a given feature network, with uniform layer weights.

    d(x, c) = Σ_l mean_{h,w} Σ_ch (x̂_l − ĉ_l)², where x̂_l are layer-l activations
    unit-normalised along channels at each position. LPIPS proper learns a non-negative
    weight per channel ("lin" layers) from human similarity judgements; those do not exist
    for the bundled domains, so every channel weighs 1 (Zhang et al.'s "baseline" variant).
    Each layer contributes at most 4 (two unit vectors), so d ∈ [0, 4·L].

    Args:
        x, c: image batches N×C×H×W in ``value_range``.
        feature_maps: callable mapping an image batch to a list of N×C_l×H_l×W_l tensors
            (the caller picks the network, device and eval mode; gradients pass through).
        eps: added to the channel norm so all-zero activations normalise to zero, not NaN.
    """
    if not callable(feature_maps):
        raise TypeError(f"`feature_maps` must be callable, got {describe(feature_maps)}")
    eps_value = check_real("eps", eps, minimum=0.0)
    x_t, c_t = check_image_pair(x, c, value_range=value_range)
    # per-sample distances: computed in chunks so the activations of large batches stay small
    parts = [
        _perceptual_chunk(x_t[i : i + PERCEPTUAL_CHUNK], c_t[i : i + PERCEPTUAL_CHUNK], feature_maps, eps_value)
        for i in range(0, max(1, x_t.shape[0]), PERCEPTUAL_CHUNK)
    ]
    return torch.cat(parts)


#: Images per call of the feature network in :func:`perceptual_distance`.
PERCEPTUAL_CHUNK = 256


def _perceptual_chunk(x_t: Tensor, c_t: Tensor, feature_maps: FeatureMaps, eps_value: float) -> Tensor:
    batch = x_t.shape[0]
    maps_x = _check_feature_maps("x", feature_maps(x_t), batch)
    maps_c = _check_feature_maps("c", feature_maps(c_t), batch)
    if len(maps_x) != len(maps_c):
        raise ValueError(
            f"`feature_maps` returned {len(maps_x)} layers for x but {len(maps_c)} for c; it must be deterministic"
        )
    total = torch.zeros(batch, dtype=torch.float32, device=x_t.device)
    for layer, (fx, fc) in enumerate(zip(maps_x, maps_c)):
        if fx.shape != fc.shape:
            raise ValueError(
                f"layer {layer} feature maps differ in shape between x {tuple(fx.shape)} and c {tuple(fc.shape)}"
            )
        diff = _unit_normalise(fx, eps_value) - _unit_normalise(fc, eps_value)
        layer_distance = diff.pow(2).sum(dim=1).mean(dim=(1, 2)).to(torch.float32)
        if not bool(torch.isfinite(layer_distance).all()):
            raise ValueError(f"layer {layer} feature maps contain NaN or infinite activations")
        total = total + layer_distance
    return total


def ground_truth_error(counterfactuals: Tensor, truth: Tensor) -> Tensor:
    """Mean absolute pixel difference between each counterfactual and the true counterfactual
    of the same input (which a domain with an SCM can compute; real data cannot).

    Args:
        counterfactuals, truth: image batches N×C×H×W in [0, 1].

    Returns:
        float32 N in [0, 1]: 1/D Σ_d |c_d − t_d| over the D values of each image.

    Example:
        >>> ground_truth_error(torch.zeros(2, 1, 2, 2), torch.tensor([0.0, 1.0]).reshape(2, 1, 1, 1).expand(2, 1, 2, 2))
        tensor([0., 1.])
    """
    c_t, t_t = check_image_pair(counterfactuals, truth, value_range=UNIT_RANGE)
    return (c_t - t_t).abs().flatten(1).mean(dim=1).to(torch.float32)


def ground_truth_relative_error(counterfactuals: Tensor, truth: Tensor, inputs: Tensor) -> Tensor:
    """Each counterfactual's pixel error to the true counterfactual, relative to the input's own:
    d(c, t) / d(x, t), d the mean absolute pixel difference (:func:`ground_truth_error`).

    0 is the true counterfactual, 1 the unchanged input (or any image as far from the truth as the
    input); a method that returns the truth for a share s of its inputs and the input for the rest
    scores 1 − s on average, so a bar on it states the share of right counterfactuals it requires.

    Args:
        counterfactuals, truth, inputs: image batches N×C×H×W in [0, 1].

    Returns:
        float32 N ≥ 0; NaN where the input equals its true counterfactual (nothing to move).

    Example:
        >>> x, t = torch.zeros(3, 1, 2, 2), torch.ones(3, 1, 2, 2)
        >>> ground_truth_relative_error(torch.stack([t[0], x[0], 0.25 * t[0]]), t, x)
        tensor([0.0000, 1.0000, 0.7500])
    """
    c_t, t_t = check_image_pair(counterfactuals, truth, value_range=UNIT_RANGE, names=("counterfactuals", "truth"))
    x_t, _ = check_image_pair(inputs, truth, value_range=UNIT_RANGE, names=("inputs", "truth"))
    to_truth = (c_t.double() - t_t.double()).abs().flatten(1).mean(dim=1)
    input_to_truth = (x_t.double() - t_t.double()).abs().flatten(1).mean(dim=1)
    relative = torch.where(
        input_to_truth > 0, to_truth / input_to_truth.clamp_min(1e-300), torch.full_like(to_truth, float("nan"))
    )
    return relative.to(torch.float32)


def attribute_changes(labels_x: Sequence[Tensor], labels_c: Sequence[Tensor]) -> Tensor:
    """How many attributes an oracle labels differently on the input and its counterfactual (the
    per-input term of MNAC, the mean number of attributes changed).

    Args:
        labels_x: one int64 tensor of N predicted labels per attribute, on the inputs.
        labels_c: the same attributes, in the same order, on the counterfactuals.

    Returns:
        float32 N: Σ_a [labels_x[a] ≠ labels_c[a]], in [0, number of attributes].

    Raises:
        ValueError: if the two sequences differ in length, are empty, or hold tensors that are
            not 1-D of one common length N.
        TypeError: for a non-tensor or a non-integer tensor.

    Example:
        >>> attribute_changes([torch.tensor([0, 1, 2]), torch.tensor([1, 1, 1])],
        ...                   [torch.tensor([0, 2, 0]), torch.tensor([1, 0, 1])])
        tensor([0., 2., 1.])
    """
    if len(labels_x) != len(labels_c) or not labels_x:
        raise ValueError(
            f"`labels_x` and `labels_c` must hold the same attributes (at least one), "
            f"got {len(labels_x)} and {len(labels_c)}"
        )
    counts = None
    for position, (before, after) in enumerate(zip(labels_x, labels_c)):
        for name, labels in (("labels_x", before), ("labels_c", after)):
            tensor = check_tensor(f"{name}[{position}]", labels)
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
                raise TypeError(f"`{name}[{position}]` must hold integer labels, got {tensor.dtype}")
            if tensor.ndim != 1:
                raise ValueError(f"`{name}[{position}]` must be 1-D (N labels), got shape {tuple(tensor.shape)}")
        if before.shape != after.shape or (counts is not None and before.shape[0] != counts.shape[0]):
            raise ValueError(
                f"attribute {position}: labels must have one common length N, got "
                f"{tuple(before.shape)} and {tuple(after.shape)}"
            )
        changed = (before != after).to(torch.float32)
        counts = changed if counts is None else counts + changed
    assert counts is not None  # at least one attribute (checked above)
    return counts


@functools.lru_cache(maxsize=4)
def _lpips_model(net: str) -> torch.nn.Module:
    lpips = require(
        "lpips",
        extra="lpips",
        purpose=f"lpips_distance(net={net!r})",
        note=(
            "It also needs torchvision, which must match the installed torch build "
            f"(torch {torch.__version__}); use perceptual_distance() with a domain network otherwise."
        ),
    )
    model = lpips.LPIPS(net=net, verbose=False)
    return model.eval().requires_grad_(False)


def lpips_distance(x: Tensor, c: Tensor, net: str = "alex") -> Tensor:
    """Real LPIPS (learned weights, ImageNet backbone) via the optional ``lpips`` package.

    Images in [0, 1] with 1 or 3 channels; grey images are repeated to 3 channels and
    everything is mapped to [−1, 1], the input range LPIPS was trained on. Raises
    :class:`~cfcheck.metrics._optional.OptionalDependencyError` when ``lpips`` or a
    matching torchvision is not importable.
    """
    if net not in _LPIPS_NETS:
        raise ValueError(f"`net` must be one of {_LPIPS_NETS}, got {net!r}")
    x_t, c_t = check_image_pair(x, c, value_range=UNIT_RANGE)
    if x_t.ndim != 4 or x_t.shape[1] not in (1, 3):
        raise ValueError(f"`x` and `c` must be N×1×H×W or N×3×H×W images, got shape {tuple(x_t.shape)}")
    model = _lpips_model(net).to(x_t.device)
    if x_t.shape[1] == 1:
        x_t, c_t = x_t.repeat(1, 3, 1, 1), c_t.repeat(1, 3, 1, 1)
    with torch.no_grad():
        distance = model(x_t.float() * 2 - 1, c_t.float() * 2 - 1, normalize=False)
    return distance.reshape(-1).to(torch.float32)
