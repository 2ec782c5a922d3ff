"""Latent-counterfactual metrics of Bex et al.: the flip categories, the trivial rate and S#.

The functions are :mod:`cfcheck.metrics.synbols`. Only S# has a bar (see its rationale): the
flip rates do not separate the latent kind's controls (the repeater, which games diversity,
flips as often as the informed-search oracle), so they are reported without a verdict.
"""

from __future__ import annotations

import math

from cfcheck.metrics.card import Bar, Direction, MetricCard
from cfcheck.metrics.definitions import with_own_paper_differences

_BEX = "Bex et al., Evaluating visual counterfactual explainers (Synbols), §3.4 and appendix A.3.2"
_LATENTS = (
    "latents z (N×D) and K counterfactual latents z′ (N×K×D) in the domain's standardised coordinates; "
    "ĥ = the explained classifier on g(z), h_causal = the domain's causal oracle, both as labels"
)
_PROXIMAL = (
    "P_r: every categorical embedding moved by at most its L1 radius (the largest pairwise distance "
    "between its category embeddings) and the continuous attributes by at most L1 = 1"
)
_ABSTAIN = "an abstained counterfactual is in no category; rates divide by the K counterfactuals asked for"
_NO_BAR = (
    "no bar: the latent kind's controls do not separate on it: the diversity-gaming repeater flips as often "
    "as the informed-search oracle or more, so a rate cannot tell a gamed explainer from a useful one (the "
    "controls' values are shown beside this card)"
)
_PER_INPUT = "Per input: the share of its K counterfactuals; averaged over inputs, 95% percentile bootstrap CI."


def _rate_card(key: str, name: str, formula: str, direction: Direction, notes: str) -> MetricCard:
    return MetricCard(
        key,
        name,
        formula,
        direction,
        (0.0, 1.0),
        "fraction of an input's K counterfactuals",
        _LATENTS,
        _ABSTAIN,
        _BEX,
        True,
        notes=f"{notes} {_PER_INPUT}",
        rationale=_NO_BAR,
        computed_by=("cfcheck.metrics.synbols.synbols_scores", "cfcheck.metrics.synbols.category_rates"),
    )


SYNBOLS_CARDS = (
    _rate_card(
        "synbols_ef_rate",
        "Estimator flips (EF)",
        f"z′ ∈ P_r ∧ ĥ(z′) ≠ ĥ(z) (Eq. 3); {_PROXIMAL}",
        "none",
        "The classic success criterion; gameable by trivial flips (see synbols_trivial_rate).",
    ),
    _rate_card(
        "synbols_ncf_rate",
        "Non-causal flips (NCF)",
        "EF ∧ h_causal(z′) = h_causal(z) (Eq. 4)",
        "higher",
        "The classifier flips where the causal oracle does not: a spurious dependence revealed.",
    ),
    _rate_card(
        "synbols_cf_rate",
        "Causal flips (CF)",
        "z′ ∈ P_r ∧ ĥ(z′) = ĥ(z) ∧ h_causal(z′) ≠ h_causal(z) (Eq. 5)",
        "higher",
        "The causal label changes and the classifier does not notice: a failure case revealed.",
    ),
    _rate_card(
        "synbols_sce_rate",
        "Successful counterfactual explanations (SCE)",
        "NCF ∨ CF (Eq. 6)",
        "higher",
        "Any proximal counterfactual on which the classifier and the causal oracle disagree about change.",
    ),
    _rate_card(
        "synbols_trivial_rate",
        "Trivial counterfactuals",
        "EF ∧ h_causal(z′) ≠ h_causal(z) (Table 2)",
        "lower",
        "Both the classifier and the causal oracle flip: the explainer changed the causal "
        "attribute, which teaches nothing about the classifier.",
    ),
    MetricCard(
        "synbols_s_sharp",
        "S# (orthogonal and complementary successful counterfactuals)",
        "|SCE⊥(z)| (Eq. 7): SCEs sorted by ‖z′ − z‖₁; the first kept; each next one kept when, against every "
        "member, |cos| < τ (orthogonal) or cos + 1 < τ (complementary), τ = 0.15; cos between perturbation "
        "features: per categorical embedding softmax(−‖c′ − w_m‖₂ / 0.33) with the input's own category "
        "zeroed (Eqs. 12–13), and z′_cont − z_cont, concatenated into one vector",
        "higher",
        (0.0, math.inf),
        "counterfactuals per input (an integer ≤ K)",
        _LATENTS,
        _ABSTAIN,
        _BEX,
        True,
        notes=(
            "Where the paper's descriptions differ, cfcheck takes (1) one cosine of the concatenated features, as "
            "Algorithm 1 computes one cosine per pair, not a sum of per-part cosines (under a sum, a part neither "
            "counterfactual changes contributes cos ≈ 1, so counterfactuals moving different continuous "
            "attributes are never orthogonal); (2) admission against every member, as §3.4's text says, not "
            "Algorithm 1's 'complementary to any member', which admits a repeated complement. Both alternatives "
            "are available (admission='algorithm1'; cosine='summed' adds one cosine per categorical attribute "
            "and one for the continuous part, three parts with two categorical attributes, where the reference code adds "
            "two: all categorical features together, and the continuous ones). "
            "Per input; averaged over inputs, 95% percentile bootstrap CI."
        ),
        bar=Bar(1.1, "min"),
        rationale=(
            "Bex et al.'s criterion for a useful explainer is *more than one* non-redundant successful "
            "explanation per input (§4.2: explainers 'fail to consistently find more than one altering "
            "attribute'). A method that returns one successful explanation per input, or repeats it K times "
            "with noise (Bex et al.'s diversity gaming) even when it always succeeds, reaches exactly 1, so "
            "the bar is above 1: 1.1, a second non-redundant explanation for one input in ten on average. "
            "The negative controls (identity, which finds none, noise and the repeater, at most one by "
            "construction) must fail it and the informed-search oracle pass it; their values are shown "
            "beside this card. Judged on the 95% interval: a method whose interval straddles 1.1 is "
            "inconclusive."
        ),
        computed_by=("cfcheck.metrics.synbols.synbols_scores", "cfcheck.metrics.synbols.greedy_orthogonal_set"),
    ),
)

__all__ = ["SYNBOLS_CARDS"]

#: the kind's own cards (its declaration's ``own_cards``), each with its differences from the papers' code
CARDS = with_own_paper_differences(SYNBOLS_CARDS)
