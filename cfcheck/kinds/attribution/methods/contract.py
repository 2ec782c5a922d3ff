"""The call contract every bundled feature attribution honours, and its one preamble.

``attribute(x, model, target[, *, generator=None]) -> saliency`` shaped like ``x``

:class:`AttributionMethod` checks the inputs, answers an empty batch with an empty one (no model
call) and hands over to the method's :meth:`~AttributionMethod.attributions`; a method that draws
random numbers derives from :class:`StochasticAttributionMethod`, whose call also takes cfcheck's
seeded ``generator=`` (the suites pass one only to a call that names it). Inputs may have any
shape N×… (vectors or images) and need not lie in [0, 1].
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import nn

from cfcheck.kinds.method_helpers import resolve_generator, validate_classifier

__all__ = ["AttributionMethod", "StochasticAttributionMethod", "validate_attribution_inputs"]


def validate_attribution_inputs(x: object, model: object, target: object) -> None:
    """Raise ``TypeError``/``ValueError`` unless ``x`` is a float N×… tensor, ``model`` an
    ``nn.Module`` and ``target`` an int64 vector of length N on ``x``'s device.

    Example:
        >>> validate_attribution_inputs(torch.zeros(3, 6), nn.Linear(6, 2), torch.zeros(2, dtype=torch.int64))
        Traceback (most recent call last):
        ...
        ValueError: Expected `target` to have shape (3,) to match `x`, but got (2,).
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"Expected `x` to be a floating-point torch.Tensor, but got {_describe(x)}.")
    if x.dim() < 2:
        raise ValueError(f"Expected `x` to have a batch dimension (N×…), but got shape {tuple(x.shape)}.")
    validate_classifier(model, name="model")
    if not isinstance(target, torch.Tensor) or target.dtype != torch.int64:
        raise TypeError(f"Expected `target` to be an int64 torch.Tensor, but got {_describe(target)}.")
    if target.shape != (x.shape[0],):
        raise ValueError(
            f"Expected `target` to have shape ({x.shape[0]},) to match `x`, but got {tuple(target.shape)}."
        )
    if target.device != x.device:
        raise ValueError(f"Expected `target` on the device of `x` ({x.device}), but got {target.device}.")


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor"
    return type(value).__name__


class AttributionMethod(ABC):
    """The preamble every bundled feature attribution shares, written once.

    :meth:`attribute` is the contract's call: it checks ``x``, ``model`` and ``target``
    (:func:`validate_attribution_inputs`), answers an empty batch with an empty map (no model
    call) and hands over to :meth:`attributions`, which a method implements. Its call takes no
    ``generator``: a deterministic method's hook gets a seeded one it may ignore. A method that
    draws random numbers derives from :class:`StochasticAttributionMethod` instead.

    Example:
        >>> class Ones(AttributionMethod):
        ...     def attributions(self, x, model, target, generator):
        ...         return torch.ones_like(x)
        >>> Ones().attribute(torch.rand(2, 6), nn.Linear(6, 3), torch.tensor([0, 2])).shape
        torch.Size([2, 6])
    """

    def attribute(self, x: torch.Tensor, model: nn.Module, target: torch.Tensor) -> torch.Tensor:
        """The saliency of each input of ``x`` for its ``target`` class under ``model``.

        Args:
            x: float N×… inputs.
            model: the classifier explained (an ``nn.Module``).
            target: int64 N classes, on ``x``'s device.

        Returns:
            maps shaped like ``x`` (see :meth:`attributions`).
        """
        return self._run(x, model, target, None)

    def _run(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator | None
    ) -> torch.Tensor:
        """The preamble, then :meth:`attributions` (what every public call of the kind runs)."""
        validate_attribution_inputs(x, model, target)
        generator = resolve_generator(generator)
        if x.shape[0] == 0:
            return torch.zeros_like(x)
        return self.attributions(x, model, target, generator)

    @abstractmethod
    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """The method itself, on checked, non-empty inputs: maps shaped like ``x``; ``generator``
        is the caller's, or a fresh one seeded ``DEFAULT_SEED``. A subclass that does not define it
        cannot be instantiated."""


class StochasticAttributionMethod(AttributionMethod):
    """An :class:`AttributionMethod` that draws random numbers: its call also takes ``generator=``.

    Example:
        >>> class Noise(StochasticAttributionMethod):
        ...     def attributions(self, x, model, target, generator):
        ...         return torch.randn(x.shape, generator=generator)
        >>> x, model, target = torch.rand(2, 6), nn.Linear(6, 3), torch.tensor([0, 2])
        >>> torch.equal(Noise().attribute(x, model, target), Noise().attribute(x, model, target))
        True
    """

    def attribute(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, *, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """As :meth:`AttributionMethod.attribute`, drawing from ``generator`` (None: a fresh one
        seeded ``DEFAULT_SEED``, so a call without it is deterministic too)."""
        return self._run(x, model, target, generator)
