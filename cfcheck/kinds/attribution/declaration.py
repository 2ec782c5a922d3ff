"""The feature attribution kind, declared for the engine (torch-free)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import DomainCalibration, KindDeclaration

if TYPE_CHECKING:
    import torch


@runtime_checkable
class FeatureAttribution(Protocol):
    def attribute(self, x: torch.Tensor, model: torch.nn.Module, target: torch.Tensor) -> Any: ...


#: where the calibration keeps its controls' values per seed (in the domain's calibration folder)
VALUES_FILE = "calibration-attribution-{profile}.json"
#: ``cfcheck calibrate --kind attribution --domain SPEC`` (:mod:`cfcheck.kinds.attribution.calibration`;
#: bundled domains too): the removal gaps' bars, earned on controls whose answer is known by construction
DOMAIN_CALIBRATION = DomainCalibration(
    run="cfcheck.kinds.attribution.calibration:run",
    summary="the attribution kind's removal gaps (bundled domains too)",
    options=(
        (
            ("--strategies",),
            {
                "nargs": "+",
                "default": None,
                "metavar": "STRATEGY:ORDER",
                "help": "measure these removal gaps (default: road:morf road:lerf roar:morf roar:lerf goar:morf)",
            },
        ),
        (
            ("--controls",),
            {"nargs": "+", "default": None, "metavar": "CONTROL", "help": "measure these controls (default: all)"},
        ),
        (
            ("--partial",),
            {
                "type": Path,
                "default": None,
                "metavar": "FILE",
                "help": "write the measurements to FILE (after each control) and derive no bars, so a "
                "calibration can be split over processes",
            },
        ),
        (
            ("--merge",),
            {
                "type": Path,
                "nargs": "+",
                "default": (),
                "metavar": "FILE",
                "help": "derive the bars from these --partial files instead of measuring",
            },
        ),
        (
            ("--with-randomisation",),
            {
                "action": "store_true",
                "help": "with --partial: measure the controls' model-randomisation similarity too",
            },
        ),
    ),
    values_file=VALUES_FILE,
)

#: the metric cards the attribution suites record (a protocol of the kind covers exactly these)
METRIC_CARDS = (
    *("roar_area", "roar_gap", "road_area", "road_gap", "goar_area", "goar_gap", "roar_leakage", "goar_leakage"),
    *("attribution_randomisation_similarity", "attribution_randomisation_similarity_support"),
    *("attribution_cascading_randomisation_similarity", "attribution_cascading_randomisation_similarity_support"),
)

DECLARATION = KindDeclaration(
    name="attribution",
    description="feature attribution: attribute(x, model, target) -> saliency",
    call="attribute",
    arguments=("x", "model", "target"),
    spec="cfcheck.kinds.attribution.spec:SPEC",
    section="cfcheck.kinds.attribution.section:SECTION_DEFAULTS",
    template="cfcheck.kinds.attribution.template:ADAPTER",
    suites="cfcheck.suites.attribution",
    adapters="cfcheck.fixtures.attribution",
    methods="cfcheck.kinds.attribution.methods.saliency",
    order=40,
    protocol=FeatureAttribution,
    task_sets=("explained", "random", "cascade", "removal"),
    domain_calibration=DOMAIN_CALIBRATION,
    cards=METRIC_CARDS,
    own_cards="cfcheck.kinds.attribution.cards:CARDS",
    # a visual counterfactual explainer seen as an attribution (opt-in with --cfcheck-view attribution)
    views={
        "vce": (
            "cfcheck.kinds.attribution.methods.saliency:CounterfactualDirection",
            "the counterfactual direction v = x − c towards the class the model ranks second",
        )
    },
)
