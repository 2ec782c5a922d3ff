"""Closeness: how little the counterfactual changes its input (Väth et al. 2023 §3.2;
Hvilshøj et al. 2021 §3.1-3.2)."""

from __future__ import annotations

import math
from typing import Any

from cfcheck.metrics.card import Bar, MetricCard
from cfcheck.metrics.definitions._common import EXCLUDED, HVILSHOJ, IMAGES

_PIXELS = "pixel intensity ([0,1] scale) summed over all pixels"
_SEEDS = (
    "Placed on the 95% intervals of the controls over seeds 0, 1 and 2 (`cfcheck calibrate --seeds 0 1 2`), "
    "so the truth passes and random_target fails on each seed."
)
_SEEDS_SHORT = "the truth's highest upper end equals random_target's lowest lower end to two decimals"


def _distance(key: str, name: str, formula: str, citation: str, **kwargs: Any) -> MetricCard:
    return MetricCard(key, name, formula, "lower", (0.0, math.inf), _PIXELS, IMAGES, EXCLUDED, citation, True, **kwargs)


CLOSENESS_CARDS = (
    _distance(
        "d1",
        "L1 distance (D_1)",
        "D_1 = 1/|X| Σ_x ‖x − c(x)‖_1",
        "Väth et al. 2023, §3.2",
        tolerance=5.0,
        rationale=(
            "The true counterfactual (with and without rejection) edits the object; a random real image "
            f"of the target class redraws it and lies further; noise far beyond. {_SEEDS} 80 sits halfway "
            "between the truth's highest interval end and random_target's lowest, so it fails a method that "
            "redraws the object instead of editing it. The L2-nearest real neighbour of the target class, "
            "expected to fail closeness, passes: it is closer than the truth in pixels (see d2); "
            "lvs_unrelated and mnac fail it."
        ),
        bar=Bar(80.0, "max"),
        computed_by=("cfcheck.metrics.closeness.minkowski_distance",),
    ),
    _distance(
        "d1_5",
        "L1.5 distance (D_1.5)",
        "D_1.5 = 1/|X| Σ_x ‖x − c(x)‖_1.5",
        "Väth et al. 2023, §3.2",
        tolerance=1.5,
        rationale=(
            f"Truth below, random_target above, noise far above. {_SEEDS} 14.6 sits halfway "
            "between the truth's highest interval end and random_target's lowest; the margin is narrow "
            "(a few per cent of the value). The L2-nearest real neighbour passes, as on d1."
        ),
        bar=Bar(14.6, "max"),
        computed_by=("cfcheck.metrics.closeness.minkowski_distance",),
    ),
    _distance(
        "d2",
        "L2 distance (D_2)",
        "D_2 = 1/|X| Σ_x ‖x − c(x)‖_2",
        "Väth et al. 2023, §3.2",
        tolerance=0.7,
        rationale=(
            "No bar: on the pairs of another class the truth's own distance is nearly that of a random "
            f"real image of the target class, and over seeds 0, 1 and 2 their 95% intervals meet ({_SEEDS_SHORT}): "
            "no L2 bar passes the truth on every seed and fails random_target. Noise lies far above, "
            "identity at 0. The L2-nearest real neighbour, expected to fail closeness, is closer than the "
            "truth in pixels: pixel distances cannot tell a minimal edit from a well-chosen other image; "
            "lvs_unrelated does, and ground_truth_relative_error judges closeness to the true "
            "counterfactual itself."
        ),
        computed_by=("cfcheck.metrics.closeness.minkowski_distance",),
    ),
    _distance(
        "elastic_net",
        "Elastic-net distance (EN)",
        "EN = 1/|X| Σ_x (‖x − c(x)‖_1 + ‖x − c(x)‖_2)",
        f"{HVILSHOJ}, §3.1",
        tolerance=5.0,
        rationale=(
            f"Truth below, random_target above, noise far above. {_SEEDS} 86 sits "
            "halfway between the truth's highest interval end and random_target's lowest. The L2-nearest "
            "real neighbour passes, as on d1."
        ),
        bar=Bar(86.0, "max"),
        computed_by=("cfcheck.metrics.closeness.elastic_net_distance",),
    ),
    MetricCard(
        "perceptual_distance",
        "Perceptual distance (LPIPS formula, domain network)",
        "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖x̂_l,hw − ĉ_l,hw‖², x̂ = activations unit-normalised over channels",
        "lower",
        (0.0, math.inf),
        "unitless (each layer contributes at most 4)",
        f"{IMAGES}; activations of the bundled domain embedding network's layers",
        EXCLUDED,
        "Zhang et al. 2018 (LPIPS) as used by Väth et al. 2023, §3.2",
        True,
        notes="Uniform channel weights: LPIPS' learned 'lin' weights need human similarity judgements, "
        "which do not exist for the bundled domains.",
        bar=Bar(1.45, "max"),
        tolerance=0.1,
        rationale=(
            "Truth below, random_target above, noise far above; 1.45 sits midway between truth and "
            "random_target. The L2-nearest real neighbour passes, as on d1: the domain network sees it as "
            "close as the truth."
        ),
        failure_hint="the counterfactuals look far from their inputs to the domain network",
        computed_by=("cfcheck.metrics.closeness.perceptual_distance",),
    ),
    MetricCard(
        "lpips",
        "LPIPS (learned, ImageNet backbone)",
        "d = Σ_l 1/(H_l W_l) Σ_{h,w} ‖w_l ⊙ (x̂_l,hw − ĉ_l,hw)‖², learned w_l ≥ 0",
        "lower",
        (0.0, math.inf),
        "unitless",
        "images in [0,1], grey repeated to 3 channels, mapped to [-1,1]; lpips package, AlexNet by default",
        EXCLUDED,
        "Zhang et al. 2018 (LPIPS); Väth et al. 2023, §3.2",
        True,
        notes='Optional: needs `pip install "cfcheck[lpips]"` and a torchvision matching torch. No bar: it '
        "has never been calibrated on the controls (torchvision cannot run beside the CPU torch here).",
        tolerance=0.03,
        computed_by=("cfcheck.metrics.closeness.lpips_distance",),
    ),
    MetricCard(
        "lvs_unrelated",
        "Label variation of an unrelated attribute (LVS)",
        "LVS_l = 1/|X| Σ_x JS_2(o_l(x) ‖ o_l(c(x))), o_l = an attribute the intervention must not change",
        "lower",
        (0.0, 1.0),
        "bits (JS divergence, log base 2)",
        f"softmax probabilities of the attribute oracle o_l; {IMAGES}",
        EXCLUDED,
        f"{HVILSHOJ}, §3.2 eq. (5)",
        True,
        notes="Recorded as lvs_unrelated:<attribute> (each attribute oracle of the domain).",
        bar=Bar(0.15, "max"),
        tolerance=0.05,
        rationale=(
            "The truth keeps the unrelated attributes (near 0 bits); the nearest real neighbour of the "
            "target class changes them (L2-nearest images have a small norm), a random real image "
            "of the target class and noise more. 0.15 sits between the truth and the nearest neighbour."
        ),
        failure_hint="the counterfactuals change an attribute the target does not involve",
        computed_by=("cfcheck.metrics.validity.label_variation",),
    ),
    MetricCard(
        "diversity",
        "Diversity (mean pairwise perceptual distance)",
        "div(x) = 2/(K(K−1)) Σ_{i<j} d(c_i(x), c_j(x)), d = perceptual_distance",
        "higher",
        (0.0, math.inf),
        "unitless (as perceptual_distance)",
        f"{IMAGES}; K ≥ 2 counterfactuals per input from different seeds",
        EXCLUDED,
        "Väth et al. 2023, §3.4",
        True,
        notes="Inputs with fewer than 2 non-abstained counterfactuals are excluded. No bar: no bundled control "
        "returns several counterfactuals, so none could be calibrated.",
        tolerance=0.05,
        computed_by=("cfcheck.metrics.diversity.pairwise_diversity", "cfcheck.metrics.closeness.perceptual_distance"),
    ),
    MetricCard(
        "mnac",
        "Mean number of attributes changed (MNAC)",
        "MNAC = 1/|X| Σ_x Σ_{a ∈ A} [o_a(x) ≠ o_a(c(x))], A = the attributes the target must not involve",
        "lower",
        (0.0, math.inf),
        "attributes (at most |A|)",
        f"predicted labels of the attribute oracles o_a (e.g. tertiles of a continuous attribute); {IMAGES}",
        EXCLUDED,
        "Rodríguez et al. 2021 (DiVE), as used by Jeanneret et al. 2022 (DiME) and 2023 (ACE)",
        True,
        notes="The count behind lvs_unrelated's probabilities: an attribute counts as changed when its oracle's "
        "predicted label flips (the truth is not at 0: the tertile oracles err near the bin edges).",
        bar=Bar(0.5, "max"),
        tolerance=0.1,
        rationale=(
            "Positive controls of closeness: the truth (the tertile oracles err near the bin edges) and "
            "identity stay well below one attribute; negative: the L2-nearest real image of the target "
            "class changes nearly one, a random one and noise more. 0.5 sits between the truth and the "
            "nearest neighbour."
        ),
        failure_hint="the attribute oracles see an unrelated attribute change along with the class",
        computed_by=("cfcheck.metrics.closeness.attribute_changes",),
    ),
)
