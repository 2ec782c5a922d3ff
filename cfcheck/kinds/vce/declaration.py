"""The visual counterfactual explainer kind, declared for the engine (torch-free)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import DomainCalibration, KindDeclaration
from cfcheck.kinds.vce.controls import CONTROL_SUITES, CONTROLS

if TYPE_CHECKING:
    import torch


@runtime_checkable
class VisualCounterfactualExplainer(Protocol):
    def explain(self, x: torch.Tensor, target: torch.Tensor, classifier: torch.nn.Module) -> Any: ...


#: The controls a domain's calibration runs (``cfcheck calibrate --domain SPEC``), in order: they
#: need nothing but the domain's data and explained classifier (the truth only where the domain
#: computes the true counterfactual). Its "pgd" is the attack sized to the domain
#: (``cfcheck.fixtures.vce.pgd_sized``); its "mixture" the truth, or the first ``--positive``, on 60 %
#: of the inputs and the input elsewhere (``cfcheck.fixtures.vce.mixture``; run only with one of them).
CONTROL_ORDER = ("truth", "random_target", "nearest", "identity", "noise", "pgd", "mixture")

DOMAIN_CALIBRATION = DomainCalibration(
    run="cfcheck.kinds.vce.calibration:run",
    summary="the VCE controls",
    options=(
        (("--out",), {"type": Path, "default": Path("reports/calibration"), "help": "where the control runs go"}),
        (("--methods",), {"nargs": "*", "default": None, "help": f"controls (default: {', '.join(CONTROL_ORDER)})"}),
        (
            ("--positive",),
            {
                "action": "append",
                "default": None,
                "metavar": "METHOD",
                "help": "a positive control of your own (a trusted method, or a true counterfactual you can "
                "render), as --method takes it (pkg.module, path.py or pkg.module:attr); expected to pass "
                "validity, closeness and realism; repeat for more",
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

#: the metric cards the VCE suites record (a protocol of the kind covers exactly these)
METRIC_CARDS = (
    *("coverage", "target_accuracy", "original_accuracy", "tcv", "oracle_score", "oracle_target_accuracy"),
    *("committee_oracle_target_accuracy", "lvs_target", "cout"),
    *("d1", "d1_5", "d2", "elastic_net", "perceptual_distance", "lpips", "lvs_unrelated", "diversity", "mnac"),
    *("ground_truth_error", "ground_truth_relative_error", "ground_truth_perceptual"),
    *("fid_target", "fid_domain", "kid_target", "kid_domain", "density_target", "density_domain"),
    *("coverage_target", "coverage_domain", "im1", "im2"),
    *("ota_gain", "randomisation_similarity", "cascading_randomisation_similarity"),
)

DECLARATION = KindDeclaration(
    name="vce",
    description="visual counterfactual explainer: explain(x, target, classifier) -> x_cf",
    call="explain",
    arguments=("x", "target", "classifier"),
    spec="cfcheck.kinds.vce.spec:SPEC",
    section="cfcheck.kinds.vce.section:SECTION_DEFAULTS",
    template="cfcheck.kinds.vce.template:ADAPTER",
    suites="cfcheck.suites.vce",
    adapters="cfcheck.fixtures.vce",
    order=10,
    protocol=VisualCounterfactualExplainer,
    fixtures=("cfcheck_oracle", "cfcheck_attribute"),
    task_sets=("explained", "random", "cascade"),
    controls=CONTROLS,
    control_suites=CONTROL_SUITES,
    reference_methods={"dvce": "(diffusion reference)", "fastdime": "(diffusion reference)"},
    domain_calibration=DOMAIN_CALIBRATION,
    cards=METRIC_CARDS,
    own_cards="cfcheck.kinds.vce.cards:CARDS",
)
