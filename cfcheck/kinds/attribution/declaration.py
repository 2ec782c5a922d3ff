"""The feature attribution kind, declared for the engine (torch-free)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import KindDeclaration

if TYPE_CHECKING:
    import torch


@runtime_checkable
class FeatureAttribution(Protocol):
    def attribute(self, x: torch.Tensor, model: torch.nn.Module, target: torch.Tensor) -> Any: ...


DECLARATION = KindDeclaration(
    name="attribution",
    description="feature attribution: attribute(x, model, target) -> saliency",
    call="attribute",
    arguments=("x", "model", "target"),
    protocol=FeatureAttribution,
    task_sets=("explained", "random", "cascade", "removal"),
    # a visual counterfactual explainer seen as an attribution (opt-in with --cfcheck-view attribution)
    views={
        "vce": (
            "cfcheck.methods.attribution.saliency:CounterfactualDirection",
            "the counterfactual direction v = x − c towards the class the model ranks second",
        )
    },
)
