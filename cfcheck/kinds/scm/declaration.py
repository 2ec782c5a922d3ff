"""The SCM counterfactual generator kind, declared for the engine (torch-free)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import DomainCalibration, KindDeclaration
from cfcheck.kinds.scm.controls import CONTROL_SUITES, CONTROLS

if TYPE_CHECKING:
    import torch


@runtime_checkable
class SCMCounterfactualGenerator(Protocol):
    def counterfactual(self, x: torch.Tensor, parents: Any, intervention: Any) -> Any: ...


#: ``cfcheck calibrate --domain SPEC --kind scm``: the controls on a user's attribute domain
#: (:mod:`cfcheck.kinds.scm.calibration`); its options are the VCE calibration's, so they are shared
DOMAIN_CALIBRATION = DomainCalibration(
    run="cfcheck.kinds.scm.calibration:run",
    summary="the SCM controls on an attribute domain (identity, noise, random, nearest and any-cell real image)",
    options=(
        (("--out",), {"type": Path, "default": Path("reports/calibration"), "help": "where the control runs go"}),
        (
            ("--methods",),
            {
                "nargs": "*",
                "default": None,
                "help": "controls (default: identity, noise, random_real, nearest_real, any_real)",
            },
        ),
        (
            ("--positive",),
            {
                "action": "append",
                "default": None,
                "metavar": "METHOD",
                "help": "a positive control of your own (a generator right by construction, such as a renderer "
                "of the domain), as --method takes it; expected to pass every SCM suite; repeat for more",
            },
        ),
        (
            ("--jobs",),
            {
                "type": int,
                "default": 1,
                "help": "how many control runs go at once (each is one process on one thread; default 1)",
            },
        ),
    ),
)

#: the metric cards the SCM suites record (a protocol of the kind covers exactly these)
METRIC_CARDS = (
    *("coverage", "composition_l1", "composition_perceptual", "composition_embedding"),
    *("effectiveness_error", "effectiveness_accuracy", "preservation_error", "preservation_accuracy"),
    *("effectiveness_predictor_error", "effectiveness_predictor_accuracy"),
    *("preservation_predictor_error", "preservation_predictor_accuracy"),
    *("cld", "cld_p_counterfactual", "cld_p_factual", "scm_fid", "scm_kid"),
    *("ground_truth_error", "ground_truth_relative_error", "ground_truth_perceptual"),
)

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
    domain_calibration=DOMAIN_CALIBRATION,
    cards=METRIC_CARDS,
    own_cards="cfcheck.kinds.scm.cards:CARDS",
)
