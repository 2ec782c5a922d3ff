"""Where a user domain's VCE bars go, from what the calibration controls reached on it: the shared
rule of :mod:`cfcheck.calibration.placement`, with the VCE kind's expectations and rules below.

Each control is expected to pass (+) or fail (−) a score, not to pass it (x: a check, which places
no bar), or nothing (:mod:`cfcheck.kinds.vce.expectations`; the user's ``--positive`` controls are
expected what the true counterfactual is). Per score, over every task and seed, ``p`` is the **worst passing** 95% interval end of the controls expected to pass it (the low end
of a higher-is-better score) and ``q`` the **best failing** end of those expected to fail it. A bar
is placed only where ``p`` lies on the good side of ``q``, so that every positive control passes and
every negative one fails on the calibration runs, conclusively, on every seed; where they overlap,
the score keeps no bar and the reason names the two controls and what would separate them
(:func:`overlap_advice`). Three rules place it:

- **share** (the validity scores and density, means over counterfactuals):
  ``bar = q + s·(p − q)`` with ``s`` = :data:`REQUIRED_SHARE` (0.8), the value a set reaches whose
  counterfactuals are 80 % like the positive controls' and 20 % like the negative ones': the bar asks
  for 80 % right counterfactuals, as the bundled validity bars do;
- **between**: any other score with a positive control, halfway between ``p`` and ``q``;
- **comparison**: a distance (closeness) with no class-changing positive control (no true
  counterfactual, no ``--positive``). Identity is no positive control there: it never changes the
  class, so a bar halfway to it would be earned by nothing. The bar is then a named comparison with
  a baseline a method must beat: closer to its input than the nearest real image of the target class
  (:data:`COMPARISON_BASELINE`'s best interval end over every task and seed), not an earned
  separation, and its rationale says so.

A check (sign x: the mixture of :data:`CHECKS`, a positive control on 60 % of the inputs and the
input on the rest; noise on validity, whose validity is chance-level: a classifier may put every noise
image in one class, the target of most "ideal" pairs) places no bar but must not pass it: where the
bar would let it pass, the bar moves halfway from the check's best interval end to the worst
positive's, and where the check reaches the positives there is no bar. Each bar reports the checks'
and the mixture's verdicts on the calibration runs. Scores that cannot state a share of right
counterfactuals (:data:`UNBARRED`) get no bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cfcheck.calibration.placement import Placement, PlacementRules
from cfcheck.calibration.placement import place_bars as place_with_rules
from cfcheck.core.thresholds import Bar
from cfcheck.kinds.vce.expectations import (
    CHECKS,
    COMPARISON_BASELINE,
    EXPECTED,
    MIXTURE_SHARE,
    ORACLE_VALIDITY,
    POSITIVE_EXPECTATIONS,
    REQUIRED_SHARE,
    SHARE_REALISM,
    UNBARRED,
    comparable_value,
    expected_sign,
    overlap_advice,
)

__all__ = [
    "CHECKS",
    "COMPARISON_BASELINE",
    "EXPECTED",
    "MIXTURE_SHARE",
    "ORACLE_VALIDITY",
    "POSITIVE_EXPECTATIONS",
    "REQUIRED_SHARE",
    "Placement",
    "comparable_value",
    "derive_bars",
    "expected_sign",
    "overlap_advice",
    "place_bars",
    "rules",
]


def _is_share_score(card: str, suite: str) -> bool:
    """Whether a score is a mean over counterfactuals of a right-or-wrong kind (the share rule's)."""
    return (suite == "validity" and card != "coverage") or card in SHARE_REALISM


def _comparison_why(baseline: str, bound: str, over: str) -> str:
    return (
        f"a comparison with a baseline, not an earned separation: closer to the input than retrieving "
        f"the nearest real image of the target class ({baseline} reaches {bound} at best, its 95% intervals' "
        f"end {over}); no class-changing positive control ran on this domain (its true counterfactual, or one "
        "named with --positive), so no control shows where a good counterfactual lies"
    )


def rules(
    expected: Mapping[str, Sequence[tuple[str, str]]] | None = None, share: float = REQUIRED_SHARE
) -> PlacementRules:
    """The VCE kind's :class:`~cfcheck.calibration.placement.PlacementRules` (``expected`` default
    :data:`EXPECTED` and :data:`CHECKS`)."""
    return PlacementRules(
        expected={**EXPECTED, **CHECKS} if expected is None else dict(expected),
        share=share,
        is_share=_is_share_score,
        unbarred=UNBARRED,
        judged=tuple(CHECKS),
        comparison={"closeness": COMPARISON_BASELINE},
        comparison_why=_comparison_why,
        advice=overlap_advice,
        more_inputs="more inputs narrow the intervals (a larger profile, or a larger n_per_source in "
        "[tool.cfcheck.vce])",
    )


def place_bars(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    domain: str,
    *,
    expected: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    share: float = REQUIRED_SHARE,
    names: Mapping[str, str] | None = None,
) -> dict[str, Placement]:
    """Metric key (``card`` or ``card:variant``) → :class:`Placement`, from control scorecards.

    Args:
        results: control → scorecard, or a sequence of such, one per seed (every task score of
            every seed counts).
        profile: the profile the controls ran at (a floor-relative bar's rule is its card's there).
        domain: the domain's name (scores of other domains are ignored).
        expected: control → [(suite or card key, sign)], the controls' expectations (default
            :data:`EXPECTED` and :data:`CHECKS`): "+" pass, "-" fail (both place the bar), "x" not
            pass (a check), "" nothing.
        share: the share of right counterfactuals a share-rule bar asks for, in (0, 1).
        names: control → how the rationale names it (default: the control's own name).

    Returns:
        One placement per score any control reached.

    Raises:
        ValueError: if ``share`` is not in (0, 1) or ``results`` holds no scorecard.
    """
    from cfcheck.kinds.registry import loaded_cards

    return place_with_rules(results, profile, domain, rules(expected, share), cards=loaded_cards(), names=names)


def derive_bars(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    domain: str,
    **options: Any,
) -> dict[str, tuple[Bar | None, str]]:
    """Metric key → (bar or None, rationale): :func:`place_bars` without the verdicts (same options)."""
    return {key: (p.bar, p.rationale) for key, p in place_bars(results, profile, domain, **options).items()}
