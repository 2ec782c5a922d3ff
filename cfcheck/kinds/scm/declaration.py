"""The SCM counterfactual generator kind, declared for the engine (torch-free)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import KindDeclaration

if TYPE_CHECKING:
    import torch


@runtime_checkable
class SCMCounterfactualGenerator(Protocol):
    def counterfactual(self, x: torch.Tensor, parents: Any, intervention: Any) -> Any: ...


#: The SCM controls (``cfcheck calibrate --methods scm_truth scm_identity scm_resample scm_noise``).
CONTROLS: dict[str, str] = {
    "scm_truth": "+composition +effectiveness +causal_graph +realism +ground_truth",
    "scm_identity": "+composition −effectiveness −causal_graph −realism −ground_truth",
    "scm_resample": "−composition +effectiveness +causal_graph +realism −ground_truth",
    "scm_noise": "−composition −effectiveness −causal_graph −realism −ground_truth",
}

DECLARATION = KindDeclaration(
    name="scm",
    description="SCM counterfactual generator: counterfactual(x, parents, intervention) -> x_cf",
    call="counterfactual",
    arguments=("x", "parents", "intervention"),
    protocol=SCMCounterfactualGenerator,
    fixtures=("cfcheck_parent",),
    markers={"cfcheck_parents(which)": "SCM suites: the 'intervened' parent or the 'others'"},
    controls=CONTROLS,
    control_suites=("composition", "effectiveness", "causal_graph", "realism"),
)
