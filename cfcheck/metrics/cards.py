"""Metric cards: what each reported number means, so scorecards can be compared.

Hvilshøj et al. 2021 show that scores computed under different normalisations or
evaluation models are not comparable; a card pins those choices down next to the
formula, the direction, the range and how abstentions count. ``cfcheck cards`` prints
them with :func:`format_card`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["CARDS", "MetricCard", "format_card", "get_card"]

Direction = Literal["higher", "lower", "none"]

_IMAGES = "images float32 in [0,1], N×1×32×32 (morpho)"
_EXCLUDED = "excluded; coverage reported"
_FAILURE0 = "counted as failures (0)"
_VAETH_31 = "Väth et al. 2023, Diffusion-based VCE evaluation, §3.1"
_EMBED = "embeddings from the bundled domain embedding network (Hvilshøj §3.1: FID on a domain network)"


@dataclass(frozen=True)
class MetricCard:
    """Everything a reader needs to interpret one score."""

    key: str
    name: str
    formula: str
    direction: Direction
    range: tuple[float, float]
    units: str
    normalisation: str
    abstentions: str
    citation: str
    per_sample: bool
    notes: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower", "none"):
            raise ValueError(f"`direction` must be 'higher', 'lower' or 'none', got {self.direction!r}")
        low, high = self.range
        if not low <= high:
            raise ValueError(f"`range` must be (low, high) with low <= high, got {self.range}")


def _validity(key: str, name: str, formula: str, direction: Direction, abstentions: str, citation: str,
              normalisation: str, notes: str = "") -> MetricCard:
    return MetricCard(key, name, formula, direction, (0.0, 1.0), "fraction of inputs", normalisation,
                      abstentions, citation, True, notes)


_F_PRED = f"predicted labels (argmax) of the explained classifier f; {_IMAGES}"
_O_PRED = f"predicted labels of the oracle f_o, never the explained classifier; {_IMAGES}"

_CARD_LIST = [
    _validity("target_accuracy", "Target accuracy (TA)", "TA = 1/|X| Σ_x 1[f(c(x)) = y_t]", "higher",
              _FAILURE0, _VAETH_31, _F_PRED),
    _validity("original_accuracy", "Original accuracy (OA)", "OA = 1/|X| Σ_x 1[f(c(x)) = y], y = f(x)", "lower",
              "counted as failures (1, as if the input were returned unchanged)", _VAETH_31, _F_PRED,
              "1 − TA − OA is the fraction flipped to a third class."),
    _validity("tcv", "Target-class validity (TCV)", "TCV = 1/|X| Σ_x 1[f(c(x)) ≠ f(x)]", "higher", _FAILURE0,
              "Hvilshøj et al. 2021, Quantitative evaluations of counterfactuals, §3.1 eq. (1)", _F_PRED,
              "Any change of f's decision counts, not only a change to y_t."),
    _validity("oracle_score", "Oracle score (OS)", "OS = 1/|X| Σ_x 1[f(c(x)) = f_o(c(x))]", "higher", _FAILURE0,
              f"{_VAETH_31}; Hvilshøj et al. 2021, §3.2 eq. (6)", _O_PRED,
              "Reported per oracle; adversarial flips of f alone score 0."),
    _validity("oracle_target_accuracy", "Oracle target accuracy (OTA)", "OTA = 1/|X| Σ_x 1[f_o(c(x)) = y_t]",
              "higher", _FAILURE0, _VAETH_31, _O_PRED, "Reported per oracle."),
    _validity("committee_oracle_target_accuracy", "Committee oracle target accuracy",
              "OTA_committee = 1/|X| Σ_x 1[argmax_k (1/M) Σ_m p_m(k | c(x)) = y_t]", "higher", _FAILURE0,
              _VAETH_31, f"softmax probabilities of the M ≥ 3 oracle-committee members; {_IMAGES}",
              "Soft vote (mean probability): hard majority votes tie often with 3 members and 10 classes."),
    MetricCard("lvs", "Label variation score (LVS_l)", "LVS_l = 1/|X| Σ_x JS_2(o_l(x) ‖ o_l(c(x)))", "none",
               (0.0, 1.0), "bits (JS divergence, log base 2)",
               f"softmax probabilities of the attribute oracle o_l; {_IMAGES}", _EXCLUDED,
               "Hvilshøj et al. 2021, §3.2 eq. (5)", True,
               "Reported per attribute oracle: low is good for attributes the intervention must not touch, "
               "high for the targeted one."),
    MetricCard("d1", "L1 distance (D_1)", "D_1 = 1/|X| Σ_x ‖x − c(x)‖_1 over all pixels", "lower",
               (0.0, math.inf), "pixel intensity ([0,1] scale) summed over 1024 pixels", _IMAGES, _EXCLUDED,
               "Väth et al. 2023, §3.2", True),
    MetricCard("d1_5", "L1.5 distance (D_1.5)", "D_1.5 = 1/|X| Σ_x ‖x − c(x)‖_1.5 over all pixels", "lower",
               (0.0, math.inf), "pixel intensity ([0,1] scale)", _IMAGES, _EXCLUDED, "Väth et al. 2023, §3.2",
               True),
    MetricCard("d2", "L2 distance (D_2)", "D_2 = 1/|X| Σ_x ‖x − c(x)‖_2 over all pixels", "lower",
               (0.0, math.inf), "pixel intensity ([0,1] scale)", _IMAGES, _EXCLUDED, "Väth et al. 2023, §3.2",
               True),
    MetricCard("elastic_net", "Elastic-net distance (EN)", "EN = 1/|X| Σ_x (‖x − c(x)‖_1 + ‖x − c(x)‖_2)",
               "lower", (0.0, math.inf), "pixel intensity ([0,1] scale)", _IMAGES, _EXCLUDED,
               "Hvilshøj et al. 2021, §3.1", True),
    MetricCard("perceptual_distance", "Perceptual distance (LPIPS formula, domain network)",
               "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖x̂_l,hw − ĉ_l,hw‖², x̂ = activations unit-normalised over channels",
               "lower", (0.0, math.inf), "unitless (each layer contributes at most 4)",
               f"{_IMAGES}; activations of the bundled domain embedding network's layers", _EXCLUDED,
               "Zhang et al. 2018 (LPIPS) as used by Väth et al. 2023, §3.2", True,
               "Uniform channel weights: LPIPS' learned 'lin' weights need human similarity judgements, "
               "which do not exist for the bundled domains."),
    MetricCard("lpips", "LPIPS (learned, ImageNet backbone)",
               "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖w_l ⊙ (x̂_l,hw − ĉ_l,hw)‖², learned w_l ≥ 0", "lower",
               (0.0, math.inf), "unitless",
               "images in [0,1], grey repeated to 3 channels, mapped to [-1,1]; lpips package, AlexNet by default",
               _EXCLUDED, "Zhang et al. 2018 (LPIPS); Väth et al. 2023, §3.2", True,
               "Optional: needs `pip install \"cfcheck[lpips]\"` and a torchvision matching torch."),
    MetricCard("fid_target", "FID to the target class",
               "FID = ‖μ_r − μ_c‖² + tr(Σ_r + Σ_c − 2 (Σ_r^½ Σ_c Σ_r^½)^½), r = real images of class y_t",
               "lower", (0.0, math.inf), "squared embedding units", f"{_IMAGES}; {_EMBED}", _EXCLUDED,
               "Väth et al. 2023, §3.3; Hvilshøj et al. 2021, §3.1 eq. (4)", False,
               "Set-level; CI by resampling both sets. Biased upward for small sets — compare only at equal n."),
    MetricCard("fid_domain", "FID to the whole data set",
               "FID as fid_target, r = real images of all classes", "lower", (0.0, math.inf),
               "squared embedding units", f"{_IMAGES}; {_EMBED}", _EXCLUDED,
               "Väth et al. 2023, §3.3; Hvilshøj et al. 2021, §3.1 eq. (4)", False,
               "Set-level; CI by resampling both sets."),
    MetricCard("kid_target", "KID to the target class",
               "KID = mean over subsets of unbiased MMD² with k(a,b) = (aᵀb / D + 1)³", "lower",
               (-math.inf, math.inf), "squared kernel-feature units", f"{_IMAGES}; {_EMBED}", _EXCLUDED,
               "Bińkowski et al. 2018 (Demystifying MMD GANs), as in torchmetrics' KernelInceptionDistance", False,
               "Unbiased, so slightly negative values occur when both sets share a distribution; "
               "less biased than FID at small n."),
    MetricCard("kid_domain", "KID to the domain",
               "KID as kid_target, against real images of any class", "lower",
               (-math.inf, math.inf), "squared kernel-feature units", f"{_IMAGES}; {_EMBED}", _EXCLUDED,
               "Bińkowski et al. 2018 (Demystifying MMD GANs), as in torchmetrics' KernelInceptionDistance", False,
               "Pure realism, whatever the class; read it beside kid_target."),
    MetricCard("diversity", "Diversity (mean pairwise perceptual distance)",
               "div(x) = 2/(K(K−1)) Σ_{i<j} d(c_i(x), c_j(x)), d = perceptual_distance", "higher",
               (0.0, math.inf), "unitless (as perceptual_distance)",
               f"{_IMAGES}; K ≥ 2 counterfactuals per input from different seeds", _EXCLUDED,
               "Väth et al. 2023, §3.4", True,
               "Inputs with fewer than 2 non-abstained counterfactuals are excluded."),
    MetricCard("coverage", "Coverage", "coverage = 1/|X| Σ_x 1[method did not abstain on x]", "higher",
               (0.0, 1.0), "fraction of inputs", "abstention mask returned by the method", "defines the metric",
               "cfcheck design (rejection step recommended by Väth et al. 2023, §5, Hypothesis 2)", True,
               "Read every 'excluded' metric together with its coverage."),
    MetricCard("randomisation_similarity", "Model-randomisation similarity",
               "ρ(x) = Spearman(|c_trained(x) − x|, |c_random(x) − x|) over pixels, average ranks for ties",
               "lower", (-1.0, 1.0), "rank correlation",
               f"{_IMAGES}; counterfactuals for the trained classifier and for RandomNet, same inputs and seeds",
               "excluded (undefined when a change map is constant); coverage reported",
               "Väth et al. 2023, §5 Hypothesis 2; Adebayo et al. 2018 (Sanity checks for saliency maps), "
               "model parameter randomisation", True,
               "Near 1: the explanation does not depend on the classifier's parameters."),
    MetricCard("ota_gain", "OTA gain on a random classifier",
               "gain = 1/|X| Σ_x (1[f_o(c(x)) = y_t] − 1[f_o(x) = y_t]), c explains RandomNet", "none",
               (-1.0, 1.0), "fraction of inputs", _O_PRED, "counted as unchanged (0: c = x)",
               "Väth et al. 2023, §5 Hypothesis 2 (RandomNet OTA)", True,
               "Should be ≈ 0 for RandomNet (gradients carry no class information); a positive gain means the "
               "method injects target-class features on its own, e.g. via a robust guide model."),
]

CARDS: dict[str, MetricCard] = {card.key: card for card in _CARD_LIST}


def get_card(key: str) -> MetricCard:
    """The card for ``key``; a KeyError lists the known keys."""
    try:
        return CARDS[key]
    except KeyError:
        raise KeyError(f"no metric card {key!r}; known cards: {', '.join(sorted(CARDS))}") from None


def _format_bound(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:g}"


def format_card(card: MetricCard) -> str:
    """Multi-line plain-text rendering of a card, as ``cfcheck cards`` prints it."""
    low, high = card.range
    open_low = "(" if math.isinf(low) else "["
    open_high = ")" if math.isinf(high) else "]"
    lines = [
        f"{card.name} [{card.key}]",
        f"  formula:       {card.formula}",
        f"  direction:     {card.direction} is better" if card.direction != "none" else "  direction:     none (see notes)",
        f"  range:         {open_low}{_format_bound(low)}, {_format_bound(high)}{open_high}",
        f"  units:         {card.units}",
        f"  normalisation: {card.normalisation}",
        f"  abstentions:   {card.abstentions}",
        f"  per sample:    {'yes (bootstrap over inputs)' if card.per_sample else 'no (set-level; bootstrap over both sets)'}",
        f"  citation:      {card.citation}",
    ]
    if card.notes:
        lines.append(f"  notes:         {card.notes}")
    return "\n".join(lines)
