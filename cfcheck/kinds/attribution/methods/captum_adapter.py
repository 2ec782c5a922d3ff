"""Any ``captum.attr`` attribution as a cfcheck attribution method, in one line.

``captum_method(IntegratedGradients, n_steps=32)`` returns an object with
``attribute(x, model, target)``: each call builds the captum algorithm around the model it is
given and forwards ``target`` and the keyword arguments to its ``attribute``. captum is an
optional extra (``pip install "cfcheck[captum]"``); the class is passed in, so this module
imports captum only to name it in an error.

Example:
    >>> from captum.attr import Saliency                       # doctest: +SKIP
    >>> cf_method = captum_method(Saliency, abs=False)          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from cfcheck.kinds.attribution.methods.contract import AttributionMethod

__all__ = ["CaptumAttribution", "captum_method", "require_captum"]


def require_captum() -> Any:
    """``captum.attr``, or an :class:`~cfcheck.metrics._optional.OptionalDependencyError` that
    says how to install it."""
    from cfcheck.metrics._optional import require

    return require("captum.attr", extra="captum", purpose="the captum attribution adapter")


class CaptumAttribution(AttributionMethod):
    """A captum attribution class behind cfcheck's ``attribute(x, model, target)`` (the kind's
    preamble, :class:`~cfcheck.kinds.attribution.methods.contract.AttributionMethod`, checks the inputs).

    Args:
        algorithm: a ``captum.attr`` class (or any class built as ``algorithm(model, **init)``
            whose ``attribute(inputs, target=..., **kwargs)`` returns a tensor shaped like x).
        init: keyword arguments of the constructor besides the model.
        **attribute_kwargs: keyword arguments of every ``attribute`` call (``n_steps``, ``abs``…).
    """

    def __init__(self, algorithm: type, init: Mapping[str, Any] | None = None, **attribute_kwargs: Any) -> None:
        if not isinstance(algorithm, type) or not callable(getattr(algorithm, "attribute", None)):
            raise TypeError(f"Expected a captum attribution class with an attribute() method, got {algorithm!r}.")
        if "target" in attribute_kwargs:
            raise ValueError("`target` is the suite's to give (the class each input is explained for); do not fix it")
        self.algorithm, self.init, self.attribute_kwargs = algorithm, dict(init or {}), attribute_kwargs
        self.name = f"captum.{algorithm.__name__}"

    def attributions(
        self, x: torch.Tensor, model: nn.Module, target: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        explainer = self.algorithm(model, **self.init)
        with torch.enable_grad():
            saliency = explainer.attribute(
                x.detach().clone().requires_grad_(True), target=target, **self.attribute_kwargs
            )
        if isinstance(saliency, tuple):  # captum returns a tuple for tuple inputs only
            (saliency,) = saliency
        return saliency.detach()

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.attribute_kwargs.items())})"


def captum_method(algorithm: type, init: Mapping[str, Any] | None = None, **attribute_kwargs: Any) -> CaptumAttribution:
    """The one-liner: ``cf_method = captum_method(IntegratedGradients, n_steps=32)``."""
    return CaptumAttribution(algorithm, init, **attribute_kwargs)
