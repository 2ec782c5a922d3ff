"""What a domain may offer the VCE kind beyond the Domain protocol, as typed protocols."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch


@runtime_checkable
class ClassCounterfactual(Protocol):
    """The domain can compute the true counterfactual of a scored input under do(class = target)
    (only a known generative process can): the ground-truth suite and the truth control need it."""

    def class_counterfactual(self, factors: Any, target: torch.Tensor) -> torch.Tensor:
        """The true counterfactuals of the inputs with exogenous ``factors`` (``split(...).factors[index]``)."""
