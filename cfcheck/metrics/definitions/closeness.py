"""Closeness to the true counterfactual, which a domain with a causal model knows: the cards every kind
that scores against that truth records."""

from __future__ import annotations

import math

from cfcheck.metrics.card import Bar, MetricCard
from cfcheck.metrics.definitions._common import IMAGES

GROUND_TRUTH_CARDS = (
    MetricCard(
        "ground_truth_error",
        "Ground-truth counterfactual error",
        "GT(x) = 1/D Σ_d |x*_d − x_true_d|: mean absolute pixel difference between the method's counterfactual "
        "and the domain's true counterfactual of the same input under the same intervention",
        "lower",
        (0.0, 1.0),
        "mean absolute pixel difference",
        IMAGES,
        "excluded; the number of counterfactuals scored is n",
        "cfcheck (no benchmark on real data can compute it; Melistas et al. 2024 measure effectiveness and "
        "composition because the true counterfactual is unknown there)",
        True,
        notes="The true counterfactual keeps every exogenous variable of the input (style, noise), applies the "
        "intervention and propagates it through the domain's SCM. Recorded by the SCM suite (the task's "
        "intervention) and by the VCE suite (do(class = target)). Reported without a verdict: its scale "
        "depends on how far the truth is from the input (a class change moves more pixels than a "
        "change of one attribute), so ground_truth_relative_error, which divides by that distance, carries the bar.",
        computed_by=("cfcheck.metrics.closeness.ground_truth_error",),
    ),
    MetricCard(
        "ground_truth_relative_error",
        "Ground-truth counterfactual error, relative to the input's",
        "GT_rel(x) = d(x*, x_true) / d(x, x_true), d = mean absolute pixel difference (ground_truth_error); "
        "an abstention counts as x* = x",
        "lower",
        (0.0, math.inf),
        "fraction of the input's own distance to the truth",
        f"{IMAGES}; inputs equal to their true counterfactual (nothing to move) are left out",
        "counted as the unchanged input (1): an abstention is not a right counterfactual",
        "cfcheck (as ground_truth_error; no benchmark on real data can compute it)",
        True,
        notes="0 is the true counterfactual, 1 the unchanged input or any image as far from the truth; above 1, "
        "further from the truth than the input itself (a different style, noise). Recorded by the VCE "
        "suite (do(class = target)) and the SCM suite (the task's intervention).",
        bar=Bar(0.2, "max"),
        tolerance=0.05,
        rationale=(
            "A method that returns the truth for a share s of its inputs and the input for the rest "
            "scores 1 − s on average, so 0.2 asks for 80 % right counterfactuals, as the validity bars "
            "do: the truth mixtures land at 0.5, 0.3, 0.2, 0.1 and 0.05 by construction. The truth "
            "scores 0; identity 1; targeted PGD and uniform noise, which stay near the input or leave "
            "it for noise, 1 and above. A method can pass validity and closeness and still fail here: "
            "a counterfactual that reaches the target but draws a different digit than the input's true "
            "counterfactual is no nearer the truth than the input was."
        ),
        failure_hint="the counterfactuals are not nearer the input's true counterfactual than the input itself",
        computed_by=("cfcheck.metrics.closeness.ground_truth_relative_error",),
    ),
    MetricCard(
        "ground_truth_perceptual",
        "Ground-truth counterfactual error, perceptual",
        "GT_p(x) = d(x_true, x*), d = perceptual_distance on the domain embedding network",
        "lower",
        (0.0, math.inf),
        "unitless (as perceptual_distance)",
        f"{IMAGES}; activations of the bundled domain embedding network's layers",
        "excluded; the number of counterfactuals scored is n",
        "cfcheck, as ground_truth_error; the distance is Zhang et al.'s LPIPS formula (Väth et al. 2023, §3.2)",
        True,
        notes="The pixel error punishes a counterfactual that draws the right digit a pixel to the side as much as "
        "a wrong one; the perceptual error much less. No bar, for the reason given on ground_truth_error.",
        tolerance=0.1,
        computed_by=("cfcheck.metrics.closeness.perceptual_distance",),
    ),
)
