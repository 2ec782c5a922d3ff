"""Validity: does the counterfactual belong to the target class, for the classifier and for
independent oracles? (Väth et al. 2023 §3.1; Hvilshøj et al. 2021 §3)"""

from __future__ import annotations

from cfcheck.metrics.cards import PROPORTION_UNITS, Bar, MetricCard
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
    return MetricCard(key, name, formula, direction, (0.0, 1.0), PROPORTION_UNITS, normalisation,
                      abstentions, citation, True, **kwargs)


VALIDITY_CARDS = (
    _proportion(
        "coverage", "Coverage", "coverage = 1/|X| Σ_x 1[method did not abstain on x]", "higher",
        abstentions="defines the metric",
        citation="cfcheck design (rejection step recommended by Väth et al. 2023, §5, Hypothesis 2)",
        normalisation="abstention mask returned by the method",
        notes="Read every 'excluded' metric together with its coverage.",
        bar=None, tolerance=0.05,
        rationale=("No bar: of the bundled controls only truth_rejecting abstains at all, and on few inputs, so "
                  "no negative control could calibrate one; a method that abstains a lot fails TA and OTA "
                  "instead, which count abstentions as failures."),
        failure_hint="the method abstained on most inputs",
    ),
    _proportion(
        "target_accuracy", "Target accuracy (TA)", "TA = 1/|X| Σ_x 1[f(c(x)) = y_t]", "higher",
        bar=Bar(0.8, "min"), tolerance=0.05,
        rationale=("The positive controls (truth, truth_rejecting, random_target, nearest) reach the target on "
                  "nearly every input; identity and uniform noise stay near chance or below. 0.8 sits between, "
                  "nearer the positives, so a method may miss a few targets but a chance-level one fails by a "
                  "wide margin. Targeted PGD, expected to fail validity, passes on most classifiers: it flips f "
                  "by construction, which is all TA asks; the oracle scores are what fail it."),
        failure_hint="the explained classifier does not assign the counterfactuals to the target class",
    ),
    _proportion(
        "original_accuracy", "Original accuracy (OA)", "OA = 1/|X| Σ_x 1[f(c(x)) = y], y = f(x)", "lower",
        abstentions="counted as failures (1, as if the input were returned unchanged)",
        notes="1 − TA − OA is the fraction flipped to a third class.",
        bar=Bar(0.2, "max"), tolerance=0.05,
        rationale=("The positive controls leave almost no input in f's original class, identity every one; 0.2 "
                  "fails a method that leaves one input in five unchanged for f. Uniform noise and targeted "
                  "PGD, expected to fail validity, mostly pass: they move f off the original class without "
                  "reaching the target, which TA and the oracle scores catch."),
        failure_hint="the classifier still sees the original class in many counterfactuals",
    ),
    _proportion(
        "tcv", "Target-class validity (TCV)", "TCV = 1/|X| Σ_x 1[f(c(x)) ≠ f(x)]", "higher",
        citation=f"{HVILSHOJ}, §3.1 eq. (1)",
        notes="Any change of f's decision counts, not only a change to y_t.",
        bar=Bar(0.8, "min"), tolerance=0.05,
        rationale=("The positive controls change f's decision on nearly every input, identity on none. Uniform "
                  "noise and targeted PGD, expected to fail validity, change it too and pass: TCV counts any "
                  "change, so it is diagnostic, and noise fails TA and OTA, PGD the oracle scores."),
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
        rationale=("Over the counterfactuals that changed f's decision, the oracles agree with f on nearly all "
                  "of them for the positive controls; identity changes no decision (undefined: verdict error, "
                  "no measured value). 0.5: f and an independent oracle must agree more often than not where f "
                  "changed its mind. A single oracle is fooled in places, so PGD and noise, expected to fail "
                  "validity, pass on some tasks: targeted PGD stays well below the bar on the standard cnn but "
                  "reaches it on the mlp, noise_cnn and robust_cnn with the lenet or wide_cnn oracle, and "
                  "uniform noise reaches it with the resnet oracle on the cnn and the lenet oracle on the mlp. "
                  "The committee's majority vote (committee_oracle_target_accuracy) fails both everywhere."),
        failure_hint="where the classifier's decision changed, the oracle disagrees with it: the changes look "
                     "adversarial, or no decision changed at all",
    ),
    _proportion(
        "oracle_target_accuracy", "Oracle target accuracy (OTA)", "OTA = 1/|X| Σ_x 1[f_o(c(x)) = y_t]",
        "higher", normalisation=O_PRED, notes="Reported per oracle.",
        bar=Bar(0.5, "min"), tolerance=0.07,
        rationale=("The positive controls reach the target for every oracle on nearly every input; identity and "
                  "uniform noise stay near chance or below. 0.5 sits between. Targeted PGD, expected to fail "
                  "validity, stays far below on the standard cnn but transfers to the lenet oracle on the mlp, "
                  "noise_cnn and robust_cnn and to the wide_cnn oracle on the noise_cnn, and passes there; the "
                  "committee's majority vote (committee_oracle_target_accuracy) fails it everywhere."),
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
        rationale=("The positive controls reach the target on nearly every input; identity on none, uniform "
                  "noise near none; targeted PGD stays low on the standard cnn and rises on the other "
                  "classifiers without reaching the bar. 0.5 sits between; Wachter counterfactuals pass on "
                  "robust_cnn only (Väth et al. H1)."),
        failure_hint="the oracle committee does not see the target class: the changes flip the classifier "
                     "without changing the digit (adversarial)",
    ),
    MetricCard(
        "lvs_target", "Label variation of the targeted attribute (LVS)",
        "LVS_l = 1/|X| Σ_x JS_2(o_l(x) ‖ o_l(c(x))), o_l = the attribute oracle of the class attribute",
        "higher", (0.0, 1.0), "bits (JS divergence, log base 2)",
        f"softmax probabilities of the attribute oracle o_l (architecture allconv, which no explained "
        f"classifier uses: {EXPLAINED_ARCHITECTURES}); {IMAGES}",
        FAILURE0, f"{HVILSHOJ}, §3.2 eq. (5)", True,
        notes="Recorded as lvs_target:<attribute>. The oracle's architecture differs from every explained "
              "classifier's so that adversarial perturbations transfer to it as little as they do to the "
              "committee.",
        bar=Bar(0.4, "min"), tolerance=0.05,
        rationale=("The positive controls move the digit oracle's belief by nearly 1 bit (it is sure the digit "
                  "changed), identity not at all; targeted PGD moves it little, most on the noise-trained and "
                  "robust classifiers: the allconv digit oracle is not fooled the way the old small_cnn one was "
                  "(PGD examples read as the target: 0.083 vs 0.46; `python -m cfcheck.models.transfer`). 0.4 "
                  "sits between. Uniform noise, expected to fail validity, passes: LVS counts any change of the "
                  "oracle's belief, not a change to the target, and noise fails TA and OTA."),
        failure_hint="an independent attribute oracle does not see the targeted attribute change",
    ),
)

TRANSITION_CARDS = (
    MetricCard(
        "cout", "Counterfactual transition (COUT)",
        "COUT = AUC_k p_f(t | x_k) − AUC_k p_f(s | x_k), x_k = x with the k/T largest changes |c − x| taken from c, "
        "k = 0..T, T = 20; AUC over the inserted fraction k/T by the trapezoid rule; s = f's prediction on x, t = target",
        "higher", (-1.0, 1.0), "probability (difference of areas)",
        f"softmax of the explained classifier f; changes ranked over all C·H·W values, ties by position; {IMAGES}",
        "excluded; coverage reported", "Khorram & Fuxin 2022 (CVPR), as reported by Jeanneret et al. 2023 (ACE)", True,
        notes="Near 1: a few of the largest changes already move f from s to t; near −1: f never leaves s along the "
              "path. Follow-ups differ in T; the trapezoid AUC changes little with it. No bar: the controls' values "
              "are measured by `cfcheck calibrate` first (an adversarial perturbation also transitions well, so "
              "COUT alone cannot separate the negative controls).",
        tolerance=0.1,
    ),
)
