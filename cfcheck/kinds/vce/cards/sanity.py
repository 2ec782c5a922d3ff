"""Random-classifier sanity (Väth et al. 2023, Hypothesis 2; Adebayo et al. 2018)."""

from __future__ import annotations

from cfcheck.metrics.card import Bar, MetricCard
from cfcheck.metrics.definitions._common import IMAGES, O_PRED

_SIMILARITY = "ρ(x) = Spearman(|c_trained(x) − x|, |c_random(x) − x|) over pixels, average ranks for ties"
_ABSTAIN = (
    "an abstention counts as the unchanged input; both unchanged = identical (1), one unchanged and the "
    "other not = unrelated (0)"
)
_ADEBAYO = "Adebayo et al. 2018 (Sanity checks for saliency maps), model parameter randomisation"

SANITY_CARDS = (
    MetricCard(
        "ota_gain",
        "OTA gain on a random classifier",
        "gain = 1/|X| Σ_x (1[committee(c(x)) = y_t] − 1[committee(x) = y_t]), c explains RandomNet",
        "lower",
        (-1.0, 1.0),
        "fraction of inputs",
        O_PRED,
        "counted as unchanged (0: c = x)",
        "Väth et al. 2023, §5 Hypothesis 2 (RandomNet OTA)",
        True,
        notes="RandomNet's decisions carry no class information, so explaining it must not make the oracle "
        "committee (majority vote) see the target more often than on the unchanged inputs.",
        bar=Bar(0.3, "max"),
        tolerance=0.07,
        rationale=(
            "truth_rejecting (which abstains where RandomNet disagrees) gains little; truth and "
            "random_target, which ignore the classifier, gain on every input. 0.3 sits between. Identity, "
            "expected to fail the random-classifier suite, gains nothing and passes: it changes no input; "
            "randomisation_similarity is what fails it."
        ),
        failure_hint="explaining a random classifier still produces the target class: the method does not "
        "depend on the classifier it explains (or a guide model injects the class)",
        computed_by=("cfcheck.metrics.sanity.ota_gain",),
    ),
    MetricCard(
        "randomisation_similarity",
        "Model-randomisation similarity (RandomNet)",
        _SIMILARITY,
        "lower",
        (-1.0, 1.0),
        "rank correlation",
        f"{IMAGES}; counterfactuals for the trained cnn and for RandomNet, same inputs and seeds",
        _ABSTAIN,
        f"Väth et al. 2023, §5 Hypothesis 2; {_ADEBAYO}",
        True,
        notes="Near 1: the explanation does not depend on the classifier's parameters.",
        bar=Bar(0.5, "max"),
        tolerance=0.05,
        rationale=(
            "truth_rejecting lies far below 1; truth, random_target, identity and noise return the same "
            "output whatever the classifier (similarity 1). 0.5 sits between."
        ),
        failure_hint="the counterfactuals for the random and the trained classifier are (nearly) identical: "
        "the method ignores the classifier",
        computed_by=("cfcheck.metrics.sanity.randomisation_similarity",),
    ),
    MetricCard(
        "cascading_randomisation_similarity",
        "Cascading model-parameter randomisation (MPRT)",
        f"{_SIMILARITY}, c_random explains the trained cnn with its top layers re-initialised down to layer l",
        "lower",
        (-1.0, 1.0),
        "rank correlation",
        f"{IMAGES}; per stage of the cascade (recorded as cascading_randomisation_similarity:<layer>)",
        _ABSTAIN,
        f"{_ADEBAYO}; Quantus' MPRT",
        True,
        notes="Stages randomise layers cumulatively from the output layer down; each stage standardises its "
        "logits with label-free statistics so its predictions are spread over the classes.",
        bar=Bar(0.5, "max"),
        tolerance=0.05,
        rationale=(
            "truth_rejecting lies far below 1 at every stage; truth, random_target, identity and noise "
            "sit at 1. 0.5 sits between."
        ),
        failure_hint="the counterfactuals barely change when the classifier's layers are randomised: the "
        "method ignores (part of) the classifier",
        computed_by=("cfcheck.metrics.sanity.randomisation_similarity",),
    ),
)
