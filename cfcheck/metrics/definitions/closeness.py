"""Closeness: how little the counterfactual changes its input (Väth et al. 2023 §3.2;
Hvilshøj et al. 2021 §3.1-3.2)."""

from __future__ import annotations

import math

from cfcheck.metrics.cards import Bar, MetricCard
from cfcheck.metrics.definitions._common import EXCLUDED, HVILSHOJ, IMAGES

_PIXELS = "pixel intensity ([0,1] scale) summed over all pixels"


def _distance(key: str, name: str, formula: str, citation: str, **kwargs: object) -> MetricCard:
    return MetricCard(key, name, formula, "lower", (0.0, math.inf), _PIXELS, IMAGES, EXCLUDED, citation, True,
                      **kwargs)


CLOSENESS_CARDS = (
    _distance("d1", "L1 distance (D_1)", "D_1 = 1/|X| Σ_x ‖x − c(x)‖_1", "Väth et al. 2023, §3.2",
              tolerance=5.0, rationale="CALIBRATE", bar=Bar(120.0, "max")),
    _distance("d1_5", "L1.5 distance (D_1.5)", "D_1.5 = 1/|X| Σ_x ‖x − c(x)‖_1.5", "Väth et al. 2023, §3.2",
              tolerance=1.5, rationale="CALIBRATE", bar=Bar(30.0, "max")),
    _distance("d2", "L2 distance (D_2)", "D_2 = 1/|X| Σ_x ‖x − c(x)‖_2", "Väth et al. 2023, §3.2",
              tolerance=0.7, rationale="CALIBRATE", bar=Bar(14.0, "max")),
    _distance("elastic_net", "Elastic-net distance (EN)", "EN = 1/|X| Σ_x (‖x − c(x)‖_1 + ‖x − c(x)‖_2)",
              f"{HVILSHOJ}, §3.1", tolerance=5.0, rationale="CALIBRATE", bar=Bar(130.0, "max")),
    MetricCard(
        "perceptual_distance", "Perceptual distance (LPIPS formula, domain network)",
        "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖x̂_l,hw − ĉ_l,hw‖², x̂ = activations unit-normalised over channels",
        "lower", (0.0, math.inf), "unitless (each layer contributes at most 4)",
        f"{IMAGES}; activations of the bundled domain embedding network's layers", EXCLUDED,
        "Zhang et al. 2018 (LPIPS) as used by Väth et al. 2023, §3.2", True,
        notes="Uniform channel weights: LPIPS' learned 'lin' weights need human similarity judgements, "
              "which do not exist for the bundled domains.",
        bar=Bar(1.5, "max"), tolerance=0.1, rationale="CALIBRATE",
        failure_hint="the counterfactuals look far from their inputs to the domain network",
    ),
    MetricCard(
        "lpips", "LPIPS (learned, ImageNet backbone)",
        "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖w_l ⊙ (x̂_l,hw − ĉ_l,hw)‖², learned w_l ≥ 0", "lower",
        (0.0, math.inf), "unitless",
        "images in [0,1], grey repeated to 3 channels, mapped to [-1,1]; lpips package, AlexNet by default",
        EXCLUDED, "Zhang et al. 2018 (LPIPS); Väth et al. 2023, §3.2", True,
        notes="Optional: needs `pip install \"cfcheck[lpips]\"` and a torchvision matching torch. No bar: it "
              "has never been calibrated on the controls (torchvision cannot run beside the CPU torch here).",
        tolerance=0.03,
    ),
    MetricCard(
        "lvs_unrelated", "Label variation of an unrelated attribute (LVS)",
        "LVS_l = 1/|X| Σ_x JS_2(o_l(x) ‖ o_l(c(x))), o_l = an attribute the intervention must not change",
        "lower", (0.0, 1.0), "bits (JS divergence, log base 2)",
        f"softmax probabilities of the attribute oracle o_l; {IMAGES}", EXCLUDED, f"{HVILSHOJ}, §3.2 eq. (5)",
        True, notes="Recorded as lvs_unrelated:<attribute> (morpho: thickness, intensity).",
        bar=Bar(0.35, "max"), tolerance=0.05, rationale="CALIBRATE",
        failure_hint="the counterfactuals change an attribute the target does not involve",
    ),
    MetricCard(
        "diversity", "Diversity (mean pairwise perceptual distance)",
        "div(x) = 2/(K(K−1)) Σ_{i<j} d(c_i(x), c_j(x)), d = perceptual_distance", "higher",
        (0.0, math.inf), "unitless (as perceptual_distance)",
        f"{IMAGES}; K ≥ 2 counterfactuals per input from different seeds", EXCLUDED,
        "Väth et al. 2023, §3.4", True,
        notes="Inputs with fewer than 2 non-abstained counterfactuals are excluded. No bar: no bundled control "
              "returns several counterfactuals, so none could be calibrated.",
        tolerance=0.05,
    ),
)
