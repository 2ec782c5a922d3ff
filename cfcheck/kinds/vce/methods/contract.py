"""The call contract every visual counterfactual explainer (VCE) here honours.

``explain(x, target, classifier, *, generator=None) -> x_cf | (x_cf, valid)``

The suites check this contract on the user's method; the reference methods check it on
their own inputs too, so a misuse fails loudly at the call site with a message that says
what was expected and what was received, instead of deep inside a forward pass.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, cast

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import validate_latent_inputs

# the helpers every kind shares, importable from here as before they moved to common
from cfcheck.kinds.method_helpers import (
    DEFAULT_SEED,
    check_positive,
    input_gradient,
    predict_logits,
    resolve_generator,
    seeded_chunks,
    uniform_like,
    validate_classifier,
    validate_images,
)

__all__ = [
    "DEFAULT_SEED",
    "VisualExplainer",
    "check_positive",
    "input_gradient",
    "predict_logits",
    "resolve_generator",
    "seeded_chunks",
    "uniform_like",
    "validate_classifier",
    "validate_explain_inputs",
    "validate_latent_inputs",
    "validate_target_range",
]


def validate_explain_inputs(x: object, target: object, *, x_name: str = "x", target_name: str = "target") -> None:
    """Raise ``TypeError``/``ValueError`` unless ``x`` is N×C×H×W float in [0, 1] and
    ``target`` is an int64 vector of length N on the same device (the names only change
    the messages, so image banks and their labels are reported as such)."""
    validate_images(x, name=x_name)
    x = cast(torch.Tensor, x)
    xn, tn = f"`{x_name}`", f"`{target_name}`"
    if not isinstance(target, torch.Tensor):
        raise TypeError(f"Expected {tn} to be a torch.Tensor, but got {type(target).__name__}.")
    if target.dtype != torch.int64:
        raise TypeError(f"Expected {tn} to have dtype torch.int64, but got {target.dtype}.")
    if target.dim() != 1 or target.shape[0] != x.shape[0]:
        raise ValueError(
            f"Expected {tn} to have shape ({x.shape[0]},) to match {xn}, but got shape {tuple(target.shape)}."
        )
    if target.device != x.device:
        raise ValueError(f"Expected {tn} on the device of {xn} ({x.device}), but got {target.device}.")


def validate_target_range(target: torch.Tensor, num_classes: int) -> None:
    """Raise ``ValueError`` when a target is not a class index of a ``num_classes``-way model."""
    if target.numel() > 0 and (bool(target.min() < 0) or bool(target.max() >= num_classes)):
        raise ValueError(
            f"Expected every `target` in [0, {num_classes - 1}] for a classifier with "
            f"{num_classes} logits, but got values in [{target.min().item()}, {target.max().item()}]."
        )


class VisualExplainer(ABC):
    """The preamble every bundled visual counterfactual explainer shares, written once.

    :meth:`explain` is the contract's call: it checks ``x``, ``target`` and ``classifier``, answers
    an empty batch with an empty one (no model call), resolves ``generator`` (a seeded fresh one
    for None) and hands over to :meth:`counterfactuals`, which a method implements. A method that
    abstains returns ``(x_cf, valid)`` and says so with ``returns_valid``.

    Example:
        >>> class Blank(VisualExplainer):
        ...     def counterfactuals(self, x, target, classifier, generator):
        ...         return torch.zeros_like(x)
        >>> Blank().explain(torch.rand(2, 1, 4, 4), torch.tensor([0, 1]), nn.Identity()).shape
        torch.Size([2, 1, 4, 4])
    """

    #: whether :meth:`explain` returns ``(x_cf, valid)`` rather than ``x_cf`` (a class constant, or a
    #: property where an option decides)
    returns_valid: ClassVar[bool] = False

    def explain(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Counterfactuals of ``x`` towards ``target`` under ``classifier`` (see :meth:`counterfactuals`)."""
        validate_explain_inputs(x, target)
        validate_classifier(classifier)
        generator = resolve_generator(generator)
        if x.shape[0] == 0:
            empty = x.detach().clone()
            return (empty, torch.zeros(0, dtype=torch.bool, device=x.device)) if self.returns_valid else empty
        return self.counterfactuals(x, target, classifier, generator)

    @abstractmethod
    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The method itself, on checked, non-empty inputs: ``x_cf`` (``(x_cf, valid)`` where
        ``returns_valid``), shaped like ``x`` (or N×K×C×H×W for K counterfactuals per input); a
        subclass that does not define it cannot be instantiated."""
