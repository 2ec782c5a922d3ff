"""What each SCM calibration control of a user's attribute domain is expected to do on each SCM
score (``cfcheck calibrate --domain D --kind scm``), and the rules the shared bar placement
(:mod:`cfcheck.calibration.placement`) applies to them.

A sign per (control, suite or card key): "+" expected to pass, "-" expected to fail (both place the
bar), "x" expected not to pass (a check), "" nothing; a card entry overrides its suite's.

- the user's ``--positive`` controls (a generator right by construction, a renderer of the domain)
  are expected to pass every suite;
- ``identity`` (the input unchanged) composes perfectly and must fail effectiveness; it is expected
  nothing of the causal graph (it keeps the non-descendants, misses the descendants, and both are
  one score) nor of realism (a real image, of the observed attributes);
- ``noise`` must fail every suite;
- ``random_real`` and ``nearest_real`` (a real training image in the counterfactual's attribute
  cell: random, or nearest the input) must pass effectiveness and realism and fail composition; they
  match the attributes to a bin only, so they are expected nothing of the causal graph;
- ``any_real`` (a random real training image from any cell, the intervention ignored) must fail
  composition, effectiveness and the causal graph: it is the failing control nearest a right
  generator on the causal graph (real, but showing a random cell's attributes), so those bars sit
  between the positives and it rather than halfway to noise. It is expected nothing of realism: the
  realism reference is real images *of the counterfactual's cell*, against which a random cell's image
  scores between the in-cell controls and noise (on ``scm_shapes`` its FID's interval overlaps theirs),
  and nothing of minimality.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfcheck.calibration.placement import PlacementRules

__all__ = ["CONTROL_ORDER", "EXPECTED", "POSITIVE_EXPECTATIONS", "REQUIRED_SHARE", "UNBARRED", "rules"]

#: the bundled controls a domain's SCM calibration runs, in order (``cfcheck.fixtures.scm.<name>``)
CONTROL_ORDER = ("identity", "noise", "random_real", "nearest_real", "any_real")
#: the share of right counterfactuals a bar on an accuracy (a mean of right-or-wrong readings) asks for
REQUIRED_SHARE = 0.8

POSITIVE_EXPECTATIONS: list[tuple[str, str]] = [
    ("composition", "+"),
    ("effectiveness", "+"),
    ("causal_graph", "+"),
    ("realism", "+"),
    ("minimality", "+"),
]

EXPECTED: dict[str, list[tuple[str, str]]] = {
    "identity": [("composition", "+"), ("effectiveness", "-")],
    "noise": [
        ("composition", "-"),
        ("effectiveness", "-"),
        ("causal_graph", "-"),
        ("realism", "-"),
        ("minimality", "-"),
    ],
    "random_real": [("composition", "-"), ("effectiveness", "+"), ("realism", "+")],
    "nearest_real": [("composition", "-"), ("effectiveness", "+"), ("realism", "+")],
    "any_real": [("composition", "-"), ("effectiveness", "-"), ("causal_graph", "-")],
}

#: scores reported without a bar on a user's domain, and why
UNBARRED = {
    "coverage": (
        "reported without a bar: coverage counts the inputs a generator answers, and every control answers them all"
    ),
}

#: the accuracies: means over counterfactuals of a right-or-wrong reading (the share rule's)
SHARE_CARDS = ("effectiveness_predictor_accuracy", "preservation_predictor_accuracy")


def _advice(key: str, suite: str, positive: str, negative: str, values_separate: bool) -> str:
    if not values_separate:
        if suite in ("effectiveness", "causal_graph"):
            return (
                f"{key} reads {positive} (expected to pass) no better than {negative} (expected to fail): retrain "
                "the anti-causal predictor of that attribute (role 'anticausal_predictors') to read it more "
                "accurately, or check the positive control"
            )
        if suite in ("realism", "minimality"):
            return (
                f"{key} ranks {negative} (expected to fail) with {positive} (expected to pass): the network that "
                "scores it (role 'embedding' or 'minimality_vae') does not tell them apart; retrain it"
            )
        return f"{key} cannot tell {positive} from {negative} on this domain"
    return (
        f"the values of {positive} and {negative} separate but their 95% intervals overlap on {key}: more inputs "
        "narrow them (a larger profile, or a larger n_inputs in [tool.cfcheck.scm])"
    )


#: suite → why its scores get no bar where no positive control is named (``--positive``)
_NO_POSITIVE = {
    "causal_graph": (
        "no bundled control shows every attribute as the causal graph propagates it (identity misses the "
        "descendants, the real-image controls match a cell's bins only), so compliance with the graph earns a bar "
        "only from a generator right by construction"
    ),
    "minimality": (
        "no bundled control is a minimal counterfactual of its input (identity does not change it, the real-image "
        "controls are other images), so minimality earns a bar only from a generator right by construction"
    ),
}


def _no_positive(key: str, suite: str) -> str:
    why = _NO_POSITIVE.get(suite, "no bundled control is expected to pass it")
    return (
        f"no positive control is expected to pass it: {why}; name one with `cfcheck calibrate --domain D --kind scm "
        "--positive METHOD` (a renderer of your domain, or a generator you trust)"
    )


def rules(expected: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> PlacementRules:
    """The SCM kind's :class:`~cfcheck.calibration.placement.PlacementRules` (``expected`` default
    :data:`EXPECTED`; a calibration adds its ``--positive`` controls)."""
    return PlacementRules(
        expected=dict(EXPECTED if expected is None else expected),
        share=REQUIRED_SHARE,
        is_share=lambda card, suite: card in SHARE_CARDS,
        unbarred=UNBARRED,
        advice=_advice,
        more_inputs="more inputs narrow the intervals (a larger profile, or a larger n_inputs in [tool.cfcheck.scm])",
        no_positive=_no_positive,
    )
