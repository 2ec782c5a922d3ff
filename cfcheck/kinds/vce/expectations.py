"""What each calibration control of a user domain is expected to do on each VCE score, and the
scores a user domain's calibration leaves without a bar (:mod:`cfcheck.kinds.vce.bar_placement`
places the bars from them).

A sign per (control, suite or card key): "+" expected to pass, "-" expected to fail (both place the
bar), "x" expected not to pass (a check: it places no bar, and the bar is moved so that it does not
pass), "" nothing. A card entry overrides its suite's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfcheck.calibration.placement import comparable_value
from cfcheck.calibration.placement import expected_sign as shared_sign
from cfcheck.metrics.key import MetricKey

__all__ = [
    "CHECKS",
    "COMPARISON_BASELINE",
    "EXPECTED",
    "MIXTURE_SHARE",
    "ORACLE_VALIDITY",
    "POSITIVE_EXPECTATIONS",
    "REQUIRED_SHARE",
    "SHARE_REALISM",
    "TARGET_REALISM",
    "UNBARRED",
    "comparable_value",
    "expected_sign",
    "overlap_advice",
]

#: the share of right counterfactuals a bar on a mean over counterfactuals asks for
REQUIRED_SHARE = 0.8
#: the share of inputs the mixture control gives the positive control's counterfactual
MIXTURE_SHARE = 0.6
#: the control a distance is compared with where no class-changing positive control ran
COMPARISON_BASELINE = "nearest"

#: the scores a targeted attack on the explained classifier is built to fail (it reaches the target
#: on that classifier, so classifier-based validity cannot tell it from a good counterfactual)
ORACLE_VALIDITY = ("oracle_score", "oracle_target_accuracy", "committee_oracle_target_accuracy", "lvs_target")
#: the realism scores against real images of the target class (an unchanged input is real, but of
#: the wrong class, so it fails these and not the whole-domain ones)
TARGET_REALISM = ("fid_target", "kid_target", "density_target", "coverage_target")
#: means over counterfactuals outside the validity suite (the share rule applies to them too)
SHARE_REALISM = ("density_target", "density_domain")

#: scores reported without a bar on a user's domain, and why
UNBARRED = {
    "oracle_score": (
        "reported without a bar: the oracle score is a mean over the counterfactuals that changed the "
        "explained classifier's decision only, so it cannot state the share of right counterfactuals a bar "
        "asks for (a method right on 60 % of its inputs and unchanged on the rest scores as a right one); "
        "committee_oracle_target_accuracy and oracle_target_accuracy, over every input, judge the oracles' view"
    ),
    "tcv": (
        "reported without a bar, as on the bundled domains: TCV counts any change of the explained classifier's "
        "decision, which noise and an attack make too; target_accuracy counts the changes to the target"
    ),
    "original_accuracy": (
        "reported without a bar: it counts the inputs whose decision did not change, which noise changes too; "
        "target_accuracy counts the changes to the target"
    ),
    "coverage": (
        "reported without a bar: coverage counts the inputs a method answers, and every control but an "
        "abstaining one answers them all"
    ),
}

#: what the true counterfactual, and every ``--positive`` control, is expected to pass
POSITIVE_EXPECTATIONS: list[tuple[str, str]] = [
    ("validity", "+"),
    ("closeness", "+"),
    ("realism", "+"),
    ("ground_truth_relative_error", "+"),
]

#: control → [(suite or card key, sign)]: "+" expected to pass, "-" expected to fail, "x" expected not
#: to pass (a check: it places no bar). A card entry overrides its suite's. Identity is expected
#: nothing of closeness: it never changes the class. Noise's validity is chance-level (a classifier may
#: put all noise in one class): it is a check there.
EXPECTED: dict[str, list[tuple[str, str]]] = {
    "truth": POSITIVE_EXPECTATIONS,
    "random_target": [("validity", "+"), ("closeness", "-"), ("realism", "+"), ("ground_truth_relative_error", "-")],
    "nearest": [("validity", "+"), ("closeness", "-"), ("realism", "+"), ("ground_truth_relative_error", "-")],
    "identity": [("validity", "-"), *((m, "-") for m in TARGET_REALISM), ("ground_truth_relative_error", "-")],
    "noise": [("validity", "x"), ("closeness", "-"), ("realism", "-"), ("ground_truth_relative_error", "-")],
    "pgd": [(m, "-") for m in ORACLE_VALIDITY],
}

#: controls that place no bar, judged on every bar and kept from passing it where they are expected
#: not to pass (x): the mixture (right on 60 % of its inputs) is expected to fail the validity scores
#: that are means over every input (not coverage: it answers every input; not the oracle score, a mean
#: over the counterfactuals that changed the classifier's decision, which the mixture's are all right
#: on) and the target-class fidelity scores (not coverage_target: it judges variety, which 60 % of a
#: class's counterfactuals keep)
CHECKS: dict[str, list[tuple[str, str]]] = {
    "mixture": [
        ("validity", "x"),
        ("coverage", ""),
        ("oracle_score", ""),
        *((m, "x") for m in TARGET_REALISM if m != "coverage_target"),
    ],
}


def expected_sign(
    control: str, suite: str, metric: str, table: Mapping[str, Sequence[tuple[str, str]]] | None = None
) -> str:
    """ "+", "-", "x" or "" for ``control`` on a score of ``suite`` named ``metric`` (``key`` or
    ``key:variant``), by ``table`` (default :data:`EXPECTED` and :data:`CHECKS`)."""
    return shared_sign(control, suite, metric, table if table is not None else {**EXPECTED, **CHECKS})


def overlap_advice(key: str, suite: str, positive: str, negative: str, values_separate: bool) -> str:
    """What would separate a positive and a negative control that overlap on a score: which control,
    on which score, and what to change."""
    card = MetricKey.parse(key).card if ":" in key else key
    if negative == "pgd":
        return (
            f"the oracles follow the targeted attack on the explained classifier on {key}: make the oracle "
            "committee independent of the explained classifier (other architectures, other training data, "
            "augmentation or adversarial training), or run a larger profile if the intervals only touch"
        )
    if not values_separate:
        if suite == "closeness":
            return (
                f"{positive}'s counterfactuals lie as far from their inputs as {negative}'s: {key} cannot tell a "
                "minimal edit from this control on this domain; name a closer positive control (--positive) "
                "if you have one"
            )
        if suite == "validity":
            return (
                f"{positive} (expected to pass) is not recognised as the target class on {key} where {negative} "
                "(expected to fail) is: retrain the model that scores it (the explained classifier or the "
                "oracle named in the key) to a higher accuracy, or check the positive control"
            )
        return (
            f"{key} ranks {negative} (expected to fail) with {positive} (expected to pass): the embedding "
            "network does not tell them apart; retrain it, or give the reference split more images"
        )
    return (
        f"the values of {positive} and {negative} separate but their 95% intervals overlap on {card}: more "
        "inputs narrow them (a larger profile, or a larger n_per_source in [tool.cfcheck.vce])"
    )
