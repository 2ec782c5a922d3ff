"""Cascading model-parameter randomisation (Adebayo et al. 2018; Quantus' MPRT).

An explanation that does not change when a trained classifier's weights are replaced by
random ones cannot be explaining the classifier. The cascading test randomises the
parametrised layers one by one from the output layer down, cumulatively, and compares the
explanations of every stage with those of the trained model. This module builds the stages;
comparing explanations is the caller's business.

Every stage is a copy: the input model is never modified. Each layer is re-initialised with
PyTorch's own default initialisation (``reset_parameters``) under a seed derived from
``seed``, on the CPU, so the stages are identical for a seed on any device. A layer keeps the
same random weights in all later stages (stage k+1 = stage k with one more layer
randomised). Like ``random_net``, every stage's logits are then standardised and
class-balanced on unlabelled calibration images
(:class:`cfcheck.models.classifiers.architectures.LogitStandardisation`): a randomised top layer on
trained features otherwise tends to predict a single class for every input, which makes
"the explanation changed" trivially true or false. The stages come back frozen and in eval
mode, like the models of :func:`cfcheck.models.registry.load_model`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from .architectures import StandardisedLogits, calibrate_logits

__all__ = ["RandomisationStage", "cascading_randomisation", "parametrised_layers", "reinitialised"]


@runtime_checkable
class _Resettable(Protocol):
    def reset_parameters(self) -> None: ...


DEFAULT_LAYER_TYPES: tuple[type[nn.Module], ...] = (nn.Conv2d, nn.Linear)


@dataclass(frozen=True)
class RandomisationStage:
    """One stage of the cascade.

    Attributes:
        layer: name (in the input model) of the layer randomised at this stage, the lowest
            randomised one so far, e.g. ``"features.6"``.
        randomised: names of all layers randomised at this stage, output layer first.
        model: the classifier of this stage, frozen and in eval mode; with standardisation
            a :class:`~cfcheck.models.classifiers.architectures.StandardisedLogits` whose ``.network`` is
            the randomised copy (same parameter names as the input model).
    """

    layer: str
    randomised: tuple[str, ...]
    model: nn.Module

    @property
    def network(self) -> nn.Module:
        """The randomised copy itself (without the logit standardisation)."""
        return self.model.network if isinstance(self.model, StandardisedLogits) else self.model


def parametrised_layers(
    model: nn.Module,
    example_input: torch.Tensor,
    layer_types: Sequence[type[nn.Module]] = DEFAULT_LAYER_TYPES,
) -> list[str]:
    """Names of the ``layer_types`` modules with parameters, in the order ``forward`` calls them.

    The order comes from forward hooks during one call on ``example_input`` (a module called
    twice counts at its first call; modules ``forward`` never calls are left out). The model
    is run on a copy, so ``model`` is untouched.
    """
    probe = copy.deepcopy(model).eval()
    types: tuple[type[nn.Module], ...] = tuple(layer_types)  # (mypy infers tuple() inside isinstance as empty)
    names = {
        module: name
        for name, module in probe.named_modules()
        if isinstance(module, types) and any(True for _ in module.parameters())
    }
    order: list[str] = []
    handles = [
        module.register_forward_hook(lambda m, _i, _o: order.append(names[m]) if names[m] not in order else None)
        for module in names
    ]
    try:
        with torch.no_grad():
            probe(example_input)
    finally:
        for handle in handles:
            handle.remove()
    return order


def _reinitialise(layer: nn.Module, seed: int) -> None:
    """PyTorch's default init of ``layer`` under ``seed``, drawn on the CPU, copied in place."""
    if not isinstance(layer, _Resettable):
        raise TypeError(f"{type(layer).__name__} has no reset_parameters() to re-initialise")
    fresh = copy.deepcopy(layer).to("cpu")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        fresh.reset_parameters()
    with torch.no_grad():
        for target, source in zip(layer.parameters(), fresh.parameters()):
            target.copy_(source.to(target.device))


def _freeze(model: nn.Module) -> nn.Module:
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def cascading_randomisation(
    model: nn.Module,
    calibration_images: torch.Tensor,
    *,
    seed: int = 0,
    layer_types: Sequence[type[nn.Module]] = DEFAULT_LAYER_TYPES,
    standardise: bool = True,
    balance: bool = True,
) -> list[RandomisationStage]:
    """The progressively randomised copies of a trained classifier, output layer first.

    Args:
        model: the trained classifier (images -> N×K logits), e.g.
            ``load_model("cnn", domain=...)``; it is not modified.
        calibration_images: unlabelled images (N ≥ 2, a few hundred or more) on which each
            stage's logit standardisation is fitted; the first one also fixes the layers'
            forward order. Use images the explanations are not evaluated on (e.g. the
            train split).
        seed: fixes every re-initialisation (layer i of the forward order gets its own seed
            drawn from a generator seeded with ``seed``).
        layer_types: module types that count as parametrised layers.
        standardise: fit the label-free logit standardisation (as ``random_net``) on every
            stage; ``False`` returns the bare randomised copies.
        balance: also fit the class-balancing bias of the standardisation.

    Returns:
        One :class:`RandomisationStage` per parametrised layer, in cascade order: stage k
        (1-based) has the top k layers of the forward order randomised, the rest trained.
        ``stage.layer`` names the layer randomised last; ``stage.model`` is frozen, in eval
        mode, on the device of ``model``.

    Example:
        >>> from cfcheck.models.classifiers.architectures import build_model
        >>> images = torch.rand(500, 1, 32, 32, generator=torch.Generator().manual_seed(0))
        >>> stages = cascading_randomisation(build_model("small_cnn"), images)  # any classifier
        >>> [stage.layer for stage in stages]
        ['classifier.3', 'classifier.1', 'features.6', 'features.3', 'features.0']
        >>> logits = stages[-1].model(images[:8])  # fully randomised
    """
    device, calibration_images, order, layer_seeds = _plan(model, calibration_images, seed, layer_types)
    working = copy.deepcopy(model)
    modules = dict(working.named_modules())
    stages = []
    randomised: list[str] = []
    for name in reversed(order):
        _reinitialise(modules[name], layer_seeds[name])
        randomised.append(name)
        stage = _finish(copy.deepcopy(working), model, calibration_images, device, standardise, balance)
        stages.append(RandomisationStage(name, tuple(randomised), stage))
    return stages


def reinitialised(
    model: nn.Module,
    calibration_images: torch.Tensor,
    *,
    seed: int = 0,
    layer_types: Sequence[type[nn.Module]] = DEFAULT_LAYER_TYPES,
    standardise: bool = True,
    balance: bool = True,
) -> nn.Module:
    """A copy of ``model`` with every parametrised layer re-initialised: one draw of a random
    network of its architecture (Adebayo et al.'s model-parameter randomisation), standardised
    like the cascade's stages. It is the last stage of :func:`cascading_randomisation` for the
    same ``seed`` (each layer gets the same seed), built without the intermediate stages; a
    layer the forward pass does not call keeps its weights, as in the cascade.

    Args:
        model: the trained classifier; it is not modified.
        calibration_images: unlabelled images (N ≥ 2) for the logit standardisation.
        seed: fixes the re-initialisation; different seeds give independent draws.
        layer_types, standardise, balance: as in :func:`cascading_randomisation`.

    Returns:
        The randomised classifier, frozen, in eval mode, on the device of ``model``.

    Example:
        >>> from cfcheck.models.classifiers.architectures import build_model
        >>> images = torch.rand(500, 1, 32, 32, generator=torch.Generator().manual_seed(0))
        >>> draw = reinitialised(build_model("small_cnn"), images, seed=3)  # any classifier
        >>> draw(images[:8]).shape
        torch.Size([8, 10])
    """
    device, calibration_images, order, layer_seeds = _plan(model, calibration_images, seed, layer_types)
    working = copy.deepcopy(model)
    modules = dict(working.named_modules())
    for name in order:
        _reinitialise(modules[name], layer_seeds[name])
    return _finish(working, model, calibration_images, device, standardise, balance)


def _plan(
    model: nn.Module,
    calibration_images: torch.Tensor,
    seed: int,
    layer_types: Sequence[type[nn.Module]],
) -> tuple[torch.device, torch.Tensor, list[str], dict[str, int]]:
    """Checks the arguments; the model's device, the images on it, the layers' forward order and
    each layer's re-initialisation seed (drawn in that order from a generator seeded with ``seed``)."""
    if (
        not isinstance(calibration_images, torch.Tensor)
        or calibration_images.ndim < 2
        or calibration_images.shape[0] < 2
    ):
        raise ValueError(
            f"calibration_images must hold at least 2 images, got shape {tuple(getattr(calibration_images, 'shape', ()))}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    try:
        device = next(model.parameters()).device
    except StopIteration:
        raise ValueError("model has no parameters to randomise") from None
    calibration_images = calibration_images.to(device)
    order = parametrised_layers(model, calibration_images[:1], layer_types)
    if not order:
        raise ValueError(f"model has no {[t.__name__ for t in layer_types]} layer that forward uses")
    generator = torch.Generator().manual_seed(seed)
    layer_seeds = {name: int(torch.randint(0, 2**62, (1,), generator=generator)) for name in order}
    return device, calibration_images, order, layer_seeds


def _finish(
    network: nn.Module,
    model: nn.Module,
    calibration_images: torch.Tensor,
    device: torch.device,
    standardise: bool,
    balance: bool,
) -> nn.Module:
    """``network`` (a randomised copy of ``model``), standardised when asked, frozen."""
    if standardise:
        with torch.no_grad():
            num_classes = int(model(calibration_images[:1]).shape[1])
        network = StandardisedLogits(network, num_classes).to(device)
        calibrate_logits(network, calibration_images, balance=balance)
    return _freeze(network)
