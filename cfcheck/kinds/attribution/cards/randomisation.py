"""Model-randomisation sanity of saliency maps (Adebayo et al. 2018; Quantus' MPRT): the plain
rank similarity, its variant on the maps' non-zero support, and both per stage of the cascade."""

from __future__ import annotations

from cfcheck.metrics.card import MetricCard

_ADEBAYO = "Adebayo et al. 2018 (Sanity checks for saliency maps), model parameter randomisation"
_MPRT = f"{_ADEBAYO}, cascading; Hedström et al. 2023 (Quantus), MPRT"
_PLAIN = "ρ(x) = Spearman(|s_trained(x)|, |s_random(x)|) over input elements, average ranks for ties"
_SUPPORT = (
    "ρ_S(x) = Spearman(|s_trained(x)|_S, |s_random(x)|_S) over S = {i : s_trained(x)_i ≠ 0 or "
    "s_random(x)_i ≠ 0}, average ranks for ties"
)
_STAGE = (
    "; s_random explains the trained counterpart with its layers re-initialised from the output layer down to layer l"
)
_INPUTS = (
    "saliency maps shaped like the input, for the trained classifier and for each of the profile's random "
    "networks, same inputs and targets (the trained classifier's predictions)"
)
_CASCADE_INPUTS = (
    "saliency maps shaped like the input, for the trained counterpart and for each stage of its "
    "cascade, same inputs and targets; recorded per stage as {key}:<layer>"
)
_ABSTAIN = (
    "inputs where any of the method's calls abstained are excluded; an undefined correlation (a map "
    "constant on the elements compared{support}) scores 1 if the two maps rank the elements identically, "
    "else 0"
)
_DRAWS = (
    "The random network is a draw, and the similarity depends on which one: the score compares the trained "
    "classifier with R random networks (the profile's randomisation_draws: 5 in the quick and standard "
    "profiles, 10 in full), the domain's random classifier and R − 1 copies of the trained classifier with "
    "every parametrised layer re-initialised (PyTorch's default initialisation under seeds derived from the "
    "task's seed; logits standardised and class-balanced without labels, like the random classifier's), each "
    "explained on the same inputs for the same targets. The value is the mean of the per-(draw, input) "
    "similarity; the 95% interval is a t interval over draws and inputs crossed (the two-way ANOVA's "
    "mean squares of draws and of inputs, Satterthwaite's degrees of freedom: with few draws that differ, "
    "close to R − 1 and wide), so it estimates the mean similarity to a random network of "
    "that architecture over inputs drawn like the task's, not to the one network drawn. The per-input "
    "samples are each input's mean over the draws; the scorecard's extra['draws'] lists each draw's model and "
    "mean similarity, the spread the interval covers."
)
_EVIDENCE = (
    "The bundled attribution controls' values per seed are in the domain's calibration-attribution file "
    "(`cfcheck calibrate --kind attribution --domain D`)."
)
_CASCADE_DRAW = (
    "The cascade is one draw (its re-initialisation seed is fixed), so its interval covers the inputs "
    "only, not the choice of random weights; the single-stage score's draws show how much that moves "
    "the similarity."
)
_NO_BAR = (
    "Reported without a verdict: a method that returns fresh noise on every call would score near 0 and "
    "pass any bar, so a low value is necessary, not sufficient (the removal suites' gap to random is "
    "where noise shows)."
)
_WHY_SUPPORT = (
    "Elements that both maps leave at exactly 0 tie at the bottom of both rankings whatever the "
    "model: with a zero baseline, input×gradient and integrated gradients are 0 wherever the input "
    "is 0 (on images of a shape on a blank background, most of the image), so their plain similarity "
    "sits near 1 even where the maps on the shape differ. Restricting the ranks to the union of the "
    "maps' non-zero elements removes that shared floor; adding shared zeros changes it not at all."
)


def _card(
    key: str,
    name: str,
    formula: str,
    normalisation: str,
    abstentions: str,
    citation: str,
    notes: str,
    interval: str = "",
) -> MetricCard:
    return MetricCard(
        key,
        name,
        formula,
        "lower",
        (-1.0, 1.0),
        "rank correlation",
        normalisation,
        abstentions,
        citation,
        True,
        notes=notes,
        interval=interval,
        computed_by=(
            "cfcheck.kinds.attribution.randomisation.similarity_table",
            "cfcheck.metrics.sanity.rank_similarity",
        ),
    )


#: the interval of the scores with several random draws
_CROSSED = "random draws and inputs, crossed: a t interval from the two-way ANOVA (Satterthwaite's degrees of freedom)"


ATTRIBUTION_RANDOMISATION_CARDS = (
    _card(
        "attribution_randomisation_similarity",
        "Model-randomisation similarity of saliency maps",
        _PLAIN,
        _INPUTS,
        _ABSTAIN.format(support=""),
        _ADEBAYO,
        "Near 1: the attribution does not depend on the model's parameters (an edge detector passes the "
        f"input through whatever the model). {_DRAWS} Gradients and SmoothGrad score low; input×gradient and "
        "integrated gradients near 1 (the input factor dominates the ranking, as Adebayo et al. report, and the "
        "shared zeros of a blank background: see attribution_randomisation_similarity_support); a seeded random "
        f"attribution, the same map for every model, exactly 1. {_EVIDENCE} {_NO_BAR}",
        _CROSSED,
    ),
    _card(
        "attribution_randomisation_similarity_support",
        "Model-randomisation similarity of saliency maps, on their non-zero support",
        _SUPPORT,
        _INPUTS,
        _ABSTAIN.format(support=", or fewer than two elements non-zero in either map"),
        _ADEBAYO,
        f"{_WHY_SUPPORT} {_DRAWS} Maps without exact zeros (gradient, SmoothGrad, noise) score as in the plain "
        "variant; the input factor still shapes |x·g| on the shape, so the input-multiplied maps stay above the "
        f"gradient's. {_EVIDENCE} {_NO_BAR}",
        _CROSSED,
    ),
    _card(
        "attribution_cascading_randomisation_similarity",
        "Cascading model-parameter randomisation of saliency maps (MPRT)",
        _PLAIN + _STAGE,
        _CASCADE_INPUTS.format(key="attribution_cascading_randomisation_similarity"),
        _ABSTAIN.format(support=""),
        _MPRT,
        "Stages randomise layers cumulatively from the output layer down (the VCE suite's cascade, "
        "cascading_randomisation_similarity); a method that depends on the model falls away from 1 from "
        "the first stage on: a gradient's similarity falls stage by stage, input×gradient and integrated "
        "gradients stay near 1 at every stage in the plain variant (see the _support variant), a seeded random "
        f"attribution stays at 1. {_CASCADE_DRAW} {_NO_BAR}",
    ),
    _card(
        "attribution_cascading_randomisation_similarity_support",
        "Cascading model-parameter randomisation of saliency maps, on their non-zero support",
        _SUPPORT + _STAGE,
        _CASCADE_INPUTS.format(key="attribution_cascading_randomisation_similarity_support"),
        _ABSTAIN.format(support=", or fewer than two elements non-zero in either map"),
        _MPRT,
        f"{_WHY_SUPPORT} On the support the input-multiplied maps fall stage by stage too, from higher than the "
        f"gradient's; gradient, SmoothGrad, noise and random score as in the plain variant. {_CASCADE_DRAW} "
        f"{_NO_BAR}",
    ),
)

__all__ = ["ATTRIBUTION_RANDOMISATION_CARDS"]
