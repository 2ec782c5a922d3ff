"""The SCM counterfactual generator kind, declared for the engine (torch-free)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import KindDeclaration
from cfcheck.kinds.scm.controls import CONTROL_SUITES, CONTROLS

if TYPE_CHECKING:
    import torch


@runtime_checkable
class SCMCounterfactualGenerator(Protocol):
    def counterfactual(self, x: torch.Tensor, parents: Any, intervention: Any) -> Any: ...


DECLARATION = KindDeclaration(
    name="scm",
    description="SCM counterfactual generator: counterfactual(x, parents, intervention) -> x_cf",
    call="counterfactual",
    arguments=("x", "parents", "intervention"),
    spec="cfcheck.kinds.scm.spec:SPEC",
    section="cfcheck.kinds.scm.section:SECTION_DEFAULTS",
    template="cfcheck.kinds.scm.template:ADAPTER",
    suites="cfcheck.suites.scm",
    adapters="cfcheck.fixtures.scm",
    order=20,
    protocol=SCMCounterfactualGenerator,
    fixtures=("cfcheck_parent",),
    markers={"cfcheck_parents(which)": "SCM suites: the 'intervened' parent or the 'others'"},
    controls=CONTROLS,
    control_suites=CONTROL_SUITES,
)
