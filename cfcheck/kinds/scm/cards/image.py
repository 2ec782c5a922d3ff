"""SCM counterfactual metrics: effectiveness and causal-graph compliance, read off the image."""

from __future__ import annotations

import math

from cfcheck.kinds.scm.cards._common import SCM_ABSTAIN as _ABSTAIN
from cfcheck.kinds.scm.cards._common import SCM_IDENTITY_KEEPS as _IDENTITY_KEEPS
from cfcheck.kinds.scm.cards._common import SCM_IMAGES as _IMAGES
from cfcheck.kinds.scm.cards._common import SCM_RUN as _RUN
from cfcheck.metrics.card import PROPORTION_UNITS, Bar, MetricCard

_CITE = "Melistas et al. 2024, §3.2 (effectiveness); measured on the image as cfcheck's domains allow"
_CONTINUOUS = (
    "|m(x*) − v| / sd(v): m = the domain's measurement of the parent on the counterfactual image "
    "(its factor_measurement), v = the parent's value after the intervention, "
    "propagated by the SCM; sd = its standard deviation on the scored split"
)
_CATEGORICAL = "[o(x*) = v]: o = the domain's attribute oracle of the parent, v = its value after the intervention"


SCM_CARDS = (
    MetricCard(
        "composition_l1",
        "Composition (pixel L1 after m null interventions)",
        "‖x − f^m(x)‖₁ / D: f = the method under the null intervention do(parent = its observed value)",
        "lower",
        (0.0, 1.0),
        "mean absolute pixel difference",
        "images in [0, 1]",
        _ABSTAIN,
        "Melistas et al. 2024, §3.1 (composition; Monteiro et al. 2023)",
        True,
        notes="Recorded as composition_l1:m1 and :m10. 95% percentile bootstrap CI.",
        tolerance=0.005,
        bar=Bar(0.035, "max"),
        rationale=(
            "scm_truth and scm_identity give the input back exactly; scm_resample (an image with the same "
            "parents but another style) and noise do not. Composition must stay closer to the input than an "
            "unrelated image with the same parents: the bar is about half the resampler's distance."
        ),
        failure_hint="the null intervention does not give the input back",
        computed_by=("cfcheck.metrics.closeness.minkowski_distance",),
    ),
    MetricCard(
        "composition_perceptual",
        "Composition (perceptual distance after m null interventions)",
        "LPIPS formula on the domain network between x and f^m(x)",
        "lower",
        (0.0, math.inf),
        "unitless (as perceptual_distance)",
        "images in [0, 1]; the domain embedding's feature maps",
        _ABSTAIN,
        "Melistas et al. 2024, §3.1",
        True,
        notes="Recorded as composition_perceptual:m1 and :m10. 95% percentile bootstrap CI.",
        tolerance=0.05,
        bar=Bar(0.5, "max"),
        rationale=(
            "scm_truth and scm_identity give the input back exactly; scm_resample and noise do not. About "
            "half the resampler's distance, as for composition_l1."
        ),
        failure_hint="the null intervention does not give the input back",
        computed_by=("cfcheck.metrics.closeness.perceptual_distance",),
    ),
    MetricCard(
        "effectiveness_error",
        "Effectiveness of a continuous intervention (measured on the image)",
        _CONTINUOUS,
        "lower",
        (0.0, math.inf),
        "standard deviations of the parent",
        _IMAGES,
        _ABSTAIN,
        _CITE,
        True,
        notes="Recorded as effectiveness_error:<parent> for the intervened parent. The measurement's own error "
        "is included (the domain's measurement module states it). 95% percentile bootstrap CI.",
        bar=Bar(0.5, "max"),
        tolerance=0.05,
        rationale=(
            "scm_truth and scm_resample render the value the intervention set, so their error is the "
            "measurement's own (near 0 for a parent the domain measures exactly); scm_identity keeps the "
            "observed value and noise destroys it. 0.5 sd sits between the positives' values and the "
            f"negatives' with room for their intervals ({_RUN}: the measured line)."
        ),
        failure_hint="the counterfactual images do not show the value the intervention set",
        computed_by=(
            "cfcheck.kinds.scm.effectiveness.parent_agreement",
            "cfcheck.metrics.effectiveness.standardised_error",
        ),
    ),
    MetricCard(
        "effectiveness_accuracy",
        "Effectiveness of a categorical intervention (attribute oracle)",
        _CATEGORICAL,
        "higher",
        (0.0, 1.0),
        PROPORTION_UNITS,
        _IMAGES,
        _ABSTAIN,
        _CITE,
        True,
        notes="Recorded as effectiveness_accuracy:<parent>. Wilson 95% CI.",
        bar=Bar(0.8, "min"),
        tolerance=0.05,
        rationale=(
            "scm_truth and scm_resample show the value the intervention set; scm_identity keeps the "
            "observed one and noise reads near chance. 0.8, as the VCE target accuracy, leaves room for the "
            "attribute oracle's own errors (its test accuracy: `cfcheck models`)."
        ),
        failure_hint="the attribute oracle does not read the intervened value on the counterfactuals",
        computed_by=(
            "cfcheck.kinds.scm.effectiveness.parent_agreement",
            "cfcheck.metrics.effectiveness.categorical_hits",
        ),
    ),
    MetricCard(
        "preservation_error",
        "Causal-graph compliance of a continuous parent not intervened on",
        _CONTINUOUS,
        "lower",
        (0.0, math.inf),
        "standard deviations of the parent",
        _IMAGES,
        _ABSTAIN,
        _CITE,
        True,
        notes="Recorded as preservation_error:<parent> for each parent the intervention did not set: its SCM "
        "value moves if it descends from the intervened parent (a child of the intervened parent "
        "in the causal graph) and stays otherwise.",
        bar=Bar(0.5, "max"),
        tolerance=0.05,
        rationale=(
            "scm_truth and scm_resample give each parent the intervention did not set its SCM value: their "
            "error is the measurement's own; noise fails on every parent. " + _IDENTITY_KEEPS + ". 0.5 sd "
            "sits between the positives' values and the failing negatives' with room for their intervals "
            f"({_RUN}: the measured line)."
        ),
        failure_hint="a parent the intervention did not set is not what the causal graph implies",
        computed_by=(
            "cfcheck.kinds.scm.effectiveness.parent_agreement",
            "cfcheck.metrics.effectiveness.standardised_error",
        ),
    ),
    MetricCard(
        "preservation_accuracy",
        "Causal-graph compliance of a categorical parent not intervened on",
        _CATEGORICAL,
        "higher",
        (0.0, 1.0),
        PROPORTION_UNITS,
        _IMAGES,
        _ABSTAIN,
        _CITE,
        True,
        notes="Recorded as preservation_accuracy:<parent> (a categorical parent under an intervention on another).",
        bar=Bar(0.8, "min"),
        tolerance=0.05,
        rationale=(
            "scm_truth and scm_resample keep a categorical parent the intervention does not reach; noise "
            "reads near chance. 0.8 sits between. " + _IDENTITY_KEEPS + ": a categorical parent that "
            "descends from no intervened one is such a parent, so scm_identity passes this bar everywhere."
        ),
        failure_hint="the counterfactuals change a categorical parent the intervention did not touch",
        computed_by=(
            "cfcheck.kinds.scm.effectiveness.parent_agreement",
            "cfcheck.metrics.effectiveness.categorical_hits",
        ),
    ),
)
