"""Model-randomisation sanity of saliency maps (Adebayo et al. 2018; Quantus' MPRT): the plain
rank similarity, its variant on the maps' non-zero support, and both per stage of the cascade."""

from __future__ import annotations

from cfcheck.metrics.cards import MetricCard

_ADEBAYO = "Adebayo et al. 2018 (Sanity checks for saliency maps), model parameter randomisation"
_MPRT = f"{_ADEBAYO}, cascading; Hedström et al. 2023 (Quantus), MPRT"
_PLAIN = "ρ(x) = Spearman(|s_trained(x)|, |s_random(x)|) over input elements, average ranks for ties"
_SUPPORT = ("ρ_S(x) = Spearman(|s_trained(x)|_S, |s_random(x)|_S) over S = {i : s_trained(x)_i ≠ 0 or "
            "s_random(x)_i ≠ 0}, average ranks for ties")
_STAGE = ("; s_random explains the trained counterpart with its layers re-initialised from the output layer "
          "down to layer l")
_INPUTS = ("saliency maps shaped like the input, for the trained classifier and for the domain's random "
           "classifier, same inputs and targets (the trained classifier's predictions)")
_CASCADE_INPUTS = ("saliency maps shaped like the input, for the trained counterpart and for each stage of its "
                   "cascade, same inputs and targets; recorded per stage as {key}:<layer>")
_ABSTAIN = ("samples where either method call abstained are excluded; an undefined correlation (a map constant "
            "on the elements compared{support}) scores 1 if the two maps rank the elements identically, else 0")
_COMMAND = ("`pytest suites/attribution/test_randomisation.py --method=fixtures/<name>.py --cfcheck-profile=quick "
            "--cfcheck-domain=morpho`, seed 0")
_NO_BAR = ("Reported without a verdict: a method that returns fresh noise on every call would score near 0 and "
           "pass any bar, so a low value is necessary, not sufficient (the removal suites' gap to random is "
           "where noise shows).")
_WHY_SUPPORT = ("Elements that both maps leave at exactly 0 tie at the bottom of both rankings whatever the "
                "model: with a zero baseline, input×gradient and integrated gradients are 0 wherever the input "
                "is 0 (about 85% of a morpho image, its background), so their plain similarity sits near 1 even "
                "where the maps on the digit differ. Restricting the ranks to the union of the maps' non-zero "
                "elements removes that shared floor; adding shared zeros changes it not at all.")


def _card(key: str, name: str, formula: str, normalisation: str, abstentions: str, citation: str,
          notes: str) -> MetricCard:
    return MetricCard(key, name, formula, "lower", (-1.0, 1.0), "rank correlation", normalisation, abstentions,
                      citation, True, notes=notes)


ATTRIBUTION_RANDOMISATION_CARDS = (
    _card(
        "attribution_randomisation_similarity", "Model-randomisation similarity of saliency maps", _PLAIN,
        _INPUTS, _ABSTAIN.format(support=""), _ADEBAYO,
        "Near 1: the attribution does not depend on the model's parameters (an edge detector passes the "
        "input through whatever the model). Measured on the bundled attributions (quick, cnn vs random_net, "
        "50 inputs): gradient 0.19, SmoothGrad 0.14, Wachter's counterfactual direction 0.14; the gradient "
        "plus noise of twice its norm 0.60; input×gradient and integrated gradients 0.995 (the input factor "
        "dominates the ranking, as Adebayo et al. report, and the shared zeros of the background: see "
        "attribution_randomisation_similarity_support); the seeded random attribution 1.0. " + _NO_BAR,
    ),
    _card(
        "attribution_randomisation_similarity_support",
        "Model-randomisation similarity of saliency maps, on their non-zero support", _SUPPORT, _INPUTS,
        _ABSTAIN.format(support=", or fewer than two elements non-zero in either map"), _ADEBAYO,
        f"{_WHY_SUPPORT} Measured on the bundled attributions ({_COMMAND}, cnn vs random_net, 50 inputs): "
        "integrated gradients 0.43 (plain 0.995), input×gradient 0.46 (plain 0.995); maps without exact zeros "
        "score as in the plain variant (gradient 0.19, SmoothGrad 0.14, the gradient plus noise of twice its "
        "norm 0.60, the seeded random attribution 1.0). The input factor still shapes |x·g| on the digit, so the "
        f"input-multiplied maps stay well above the gradient's. {_NO_BAR}",
    ),
    _card(
        "attribution_cascading_randomisation_similarity",
        "Cascading model-parameter randomisation of saliency maps (MPRT)", _PLAIN + _STAGE,
        _CASCADE_INPUTS.format(key="attribution_cascading_randomisation_similarity"),
        _ABSTAIN.format(support=""), _MPRT,
        "Stages randomise layers cumulatively from the output layer down (the VCE suite's cascade, "
        "cascading_randomisation_similarity); a method that depends on the model falls away from 1 from "
        f"the first stage on. Measured ({_COMMAND}, cnn's stages classifier.3, classifier.1, features.6, "
        "features.3, features.0 in that order, 50 inputs): gradient 0.51, 0.38, 0.28, 0.17, 0.17; SmoothGrad "
        "0.49, 0.36, 0.29, 0.17, 0.13; the gradient plus noise 0.76, 0.70, 0.63, 0.59, 0.60; input×gradient "
        "and integrated gradients 0.995-0.996 at every stage (see the _support variant); the seeded random "
        f"attribution 1.0. {_NO_BAR}",
    ),
    _card(
        "attribution_cascading_randomisation_similarity_support",
        "Cascading model-parameter randomisation of saliency maps, on their non-zero support",
        _SUPPORT + _STAGE,
        _CASCADE_INPUTS.format(key="attribution_cascading_randomisation_similarity_support"),
        _ABSTAIN.format(support=", or fewer than two elements non-zero in either map"), _MPRT,
        f"{_WHY_SUPPORT} Measured ({_COMMAND}, stages from the top as in "
        "attribution_cascading_randomisation_similarity): integrated gradients 0.60, 0.55, 0.49, 0.45, 0.43; "
        "input×gradient 0.61, 0.56, 0.51, 0.45, 0.43 (both 0.995 in the plain variant); gradient, SmoothGrad, "
        f"noise and random as in the plain variant. {_NO_BAR}",
    ),
)

__all__ = ["ATTRIBUTION_RANDOMISATION_CARDS"]
