"""Validity: does the counterfactual belong to the target class, for the classifier and for
independent oracles? (Väth et al. 2023 §3.1; Hvilshøj et al. 2021 §3)"""

from __future__ import annotations

from cfcheck.metrics.cards import Bar, MetricCard
from cfcheck.metrics.definitions._common import (
    EXPLAINED_ARCHITECTURES,
    F_PRED,
    FAILURE0,
    HVILSHOJ,
    IMAGES,
    O_PRED,
    VAETH_31,
)


def _proportion(key: str, name: str, formula: str, direction: str, *, abstentions: str = FAILURE0,
                citation: str = VAETH_31, normalisation: str = F_PRED, **kwargs: object) -> MetricCard:
    return MetricCard(key, name, formula, direction, (0.0, 1.0), "fraction of inputs", normalisation,
                      abstentions, citation, True, **kwargs)


VALIDITY_CARDS = (
    _proportion(
        "coverage", "Coverage", "coverage = 1/|X| Σ_x 1[method did not abstain on x]", "higher",
        abstentions="defines the metric",
        citation="cfcheck design (rejection step recommended by Väth et al. 2023, §5, Hypothesis 2)",
        normalisation="abstention mask returned by the method",
        notes="Read every 'excluded' metric together with its coverage.",
        bar=Bar(0.5, "min"), tolerance=0.05,
        rationale="CALIBRATE",
        failure_hint="the method abstained on most inputs",
    ),
    _proportion(
        "target_accuracy", "Target accuracy (TA)", "TA = 1/|X| Σ_x 1[f(c(x)) = y_t]", "higher",
        bar=Bar(0.8, "min"), tolerance=0.05,
        rationale="CALIBRATE",
        failure_hint="the explained classifier does not assign the counterfactuals to the target class",
    ),
    _proportion(
        "original_accuracy", "Original accuracy (OA)", "OA = 1/|X| Σ_x 1[f(c(x)) = y], y = f(x)", "lower",
        abstentions="counted as failures (1, as if the input were returned unchanged)",
        notes="1 − TA − OA is the fraction flipped to a third class.",
        bar=Bar(0.2, "max"), tolerance=0.05,
        rationale="CALIBRATE",
        failure_hint="the classifier still sees the original class in many counterfactuals",
    ),
    _proportion(
        "tcv", "Target-class validity (TCV)", "TCV = 1/|X| Σ_x 1[f(c(x)) ≠ f(x)]", "higher",
        citation=f"{HVILSHOJ}, §3.1 eq. (1)",
        notes="Any change of f's decision counts, not only a change to y_t.",
        bar=Bar(0.8, "min"), tolerance=0.05,
        rationale="CALIBRATE",
        failure_hint="the classifier's decision did not change on many inputs",
    ),
    _proportion(
        "oracle_score", "Oracle score (OS)",
        "OS = 1/|C| Σ_{x∈C} 1[f(c(x)) = f_o(c(x))], C = {x : c(x) produced and f(c(x)) ≠ f(x)}", "higher",
        abstentions="excluded (an abstention changes no decision); OS is undefined, and fails, when C is empty",
        citation=f"{HVILSHOJ}, §3.2 eq. (6) and §4; {VAETH_31}", normalisation=O_PRED,
        notes="Scored only over counterfactuals that changed the explained classifier's decision, as "
              "Hvilshøj et al. do: over every input, a method that changes nothing would score ≈ 1 "
              "(f and f_o agree on real images). Reported per oracle.",
        bar=Bar(0.5, "min"), tolerance=0.07,
        rationale="CALIBRATE",
        failure_hint="where the classifier's decision changed, the oracle disagrees with it: the changes look "
                     "adversarial, or no decision changed at all",
    ),
    _proportion(
        "oracle_target_accuracy", "Oracle target accuracy (OTA)", "OTA = 1/|X| Σ_x 1[f_o(c(x)) = y_t]",
        "higher", normalisation=O_PRED, notes="Reported per oracle.",
        bar=Bar(0.5, "min"), tolerance=0.07,
        rationale="CALIBRATE",
        failure_hint="this independent oracle does not see the target class in the counterfactuals",
    ),
    _proportion(
        "committee_oracle_target_accuracy", "Committee oracle target accuracy",
        "OTA_committee = 1/|X| Σ_x 1[#{m : f_m(c(x)) = y_t} > M/2]", "higher",
        normalisation=f"predicted labels of the M = 3 oracle-committee members (architectures small_resnet, "
                      f"wide_cnn, lenet; trained on the oracle split); {IMAGES}",
        notes="Strict majority vote, ties count as misses: one fooled member cannot decide. (A soft vote — "
              "mean probability — let one over-confident fooled member outvote two unsure correct ones.)",
        bar=Bar(0.5, "min"), tolerance=0.07,
        rationale="CALIBRATE",
        failure_hint="the oracle committee does not see the target class: the changes flip the classifier "
                     "without changing the digit (adversarial)",
    ),
    MetricCard(
        "lvs_target", "Label variation of the targeted attribute (LVS)",
        "LVS_l = 1/|X| Σ_x JS_2(o_l(x) ‖ o_l(c(x))), o_l = the attribute oracle of the class attribute",
        "higher", (0.0, 1.0), "bits (JS divergence, log base 2)",
        f"softmax probabilities of the attribute oracle o_l (architecture gap_cnn, which no explained "
        f"classifier uses: {EXPLAINED_ARCHITECTURES}); {IMAGES}",
        FAILURE0, f"{HVILSHOJ}, §3.2 eq. (5)", True,
        notes="Recorded as lvs_target:<attribute>. The oracle's architecture differs from every explained "
              "classifier's so that adversarial perturbations transfer to it as little as they do to the "
              "committee.",
        bar=Bar(0.4, "min"), tolerance=0.05,
        rationale="CALIBRATE",
        failure_hint="an independent attribute oracle does not see the targeted attribute change",
    ),
)
