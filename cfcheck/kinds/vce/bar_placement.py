"""Where a user domain's VCE bars go, from what the calibration controls reached on it.

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

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cfcheck.core.thresholds import Bar, FloorRule
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
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.stats import verdict

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
]


@dataclass(frozen=True)
class Placement:
    """One score's bar (or None) and why.

    Attributes:
        bar: the bar, or None where the controls do not earn one.
        rationale: the sentence the bars file and the card quote.
        basis: "share", "between", "comparison" or "none".
        verdicts: control → verdict → how many of its task scores got it, under ``bar``.
        metric: the score's name as a scorecard writes it (``key`` or ``key:variant``).
        suite: the suite that scores it.
    """

    bar: Bar | None
    rationale: str
    basis: str
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    metric: str = ""
    suite: str = ""

    def but(self, **changes: Any) -> Placement:
        """A copy with ``changes`` (e.g. a longer rationale)."""
        return replace(self, **changes)


@dataclass
class _Score:
    """What the controls reached on one metric key."""

    metric: str
    suite: str
    card: Any
    rule: FloorRule = "absolute"
    ends: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # sign's end
    triples: dict[str, list[tuple[float, float, float]]] = field(default_factory=lambda: defaultdict(list))
    tasks: int = 0


def _collect(
    runs: Sequence[Mapping[str, dict[str, Any]]], profile: str, domain: str, table: Mapping[str, Any]
) -> dict[str, _Score]:
    from cfcheck.metrics.cards import CARDS

    found: dict[str, _Score] = {}
    for control, scorecard in ((c, card) for run in runs for c, card in run.items()):
        for score in scorecard["scores"]:
            value = score.get("value")
            if score.get("domain") != domain or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            metric = str(score["metric"])
            card = CARDS.get(MetricKey.parse(metric).card)
            if card is None or card.direction == "none":
                continue
            key = str(MetricKey.parse(metric))
            entry = found.setdefault(key, _Score(metric, str(score["suite"]), card))
            low, rule = comparable_value(score, card, profile, "ci_low")
            high, _ = comparable_value(score, card, profile, "ci_high")
            middle, _ = comparable_value(score, card, profile, "value")
            entry.rule = rule
            entry.triples[control].append((middle, low, high))
            sign = expected_sign(control, entry.suite, metric, table)
            if sign in ("+", "-"):
                # the interval's end a verdict looks at: the low end of a higher-is-better score, else the high
                passing_high = (sign == "+") == (card.direction == "higher")
                entry.ends[control].append(low if passing_high else high)
                entry.tasks += 1
    return found


_EXPECTATION = {"+": "to pass", "-": "to fail"}


def _is_share_score(card: str, suite: str) -> bool:
    """Whether a score is a mean over counterfactuals of a right-or-wrong kind (the share rule's)."""
    return (suite == "validity" and card != "coverage") or card in SHARE_REALISM


def _fmt(value: float, rule: FloorRule) -> str:
    unit = " × floor" if rule == "times_floor" else (" above the floor" if rule == "plus_floor" else "")
    return f"{value:.4g}{unit}"


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
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < share < 1.0:
        raise ValueError(f"`share` must be a number in (0, 1), got {share!r}")
    runs = [results] if isinstance(results, Mapping) else list(results)
    if not runs or not all(isinstance(run, Mapping) for run in runs):
        raise ValueError("`results` must be control → scorecard, or a non-empty sequence of such, one per seed")
    table = {**EXPECTED, **CHECKS} if expected is None else dict(expected)
    named = dict(names or {})
    seeds = f", {len(runs)} seeds" if len(runs) > 1 else ""
    placements: dict[str, Placement] = {}
    collected = _collect(runs, profile, domain, table)
    for key, entry in sorted(collected.items()):
        signs = {c: expected_sign(c, entry.suite, entry.metric, table) for c in entry.ends}
        higher = entry.card.direction == "higher"
        worst, best = (min, max) if higher else (max, min)
        positives = {c: worst(entry.ends[c]) for c, s in signs.items() if s == "+"}
        negatives = {c: best(entry.ends[c]) for c, s in signs.items() if s == "-"}
        over = (
            f"over {entry.tasks} task scores of {len(signs)} controls{seeds} on domain {domain!r} ({profile} profile)"
        )
        listing = (
            "positives (expected to pass; worst 95% interval end): "
            + ", ".join(f"{named.get(c, c)} {_fmt(v, entry.rule)}" for c, v in positives.items())
            + "; negatives (expected to fail; best end): "
            + ", ".join(f"{named.get(c, c)} {_fmt(v, entry.rule)}" for c, v in negatives.items())
        )
        kind = "min" if higher else "max"
        unbarred = UNBARRED.get(MetricKey.parse(entry.metric).card)
        if unbarred is not None:
            placements[key] = Placement(None, unbarred, "none", metric=entry.metric, suite=entry.suite)
            continue
        if not negatives:
            placements[key] = Placement(
                None, "no negative control is expected to fail it", "none", metric=entry.metric, suite=entry.suite
            )
            continue
        if not positives:
            if entry.suite != "closeness" or COMPARISON_BASELINE not in negatives:
                placements[key] = Placement(
                    None, "no positive control is expected to pass it", "none", metric=entry.metric, suite=entry.suite
                )
                continue
            bound = negatives[COMPARISON_BASELINE]
            why = (
                f"a comparison with a baseline, not an earned separation: closer to the input than retrieving "
                f"the nearest real image of the target class ({COMPARISON_BASELINE} reaches "
                f"{_fmt(bound, entry.rule)} at best, its 95% intervals' end {over}); no class-changing positive "
                "control ran on this domain (its true counterfactual, or one named with --positive), so no "
                "control shows where a good counterfactual lies"
            )
            placements[key] = Placement(
                Bar(bound, kind, entry.rule), why, "comparison", metric=entry.metric, suite=entry.suite
            )
            continue
        pos_control, p = worst(positives.items(), key=lambda cv: cv[1])
        neg_control, q = best(negatives.items(), key=lambda cv: cv[1])
        if not ((p > q) if higher else (p < q)):
            pos_mid = worst(m for m, _, _ in entry.triples[pos_control])
            neg_mid = best(m for m, _, _ in entry.triples[neg_control])
            separate = (pos_mid > neg_mid) if higher else (pos_mid < neg_mid)
            advice = overlap_advice(key, entry.suite, named.get(pos_control, pos_control), neg_control, separate)
            why = (
                f"the controls overlap: {named.get(pos_control, pos_control)} (expected to pass) reaches "
                f"{_fmt(p, entry.rule)} at worst, {neg_control} (expected to fail) {_fmt(q, entry.rule)} at best; "
                f"{listing}, {over}. What to change: {advice}"
            )
            placements[key] = Placement(None, why, "none", metric=entry.metric, suite=entry.suite)
            continue
        if _is_share_score(MetricKey.parse(entry.metric).card, entry.suite):
            bound, basis = q + share * (p - q), "share"
            rule_text = (
                f"asks for {share:.0%} right counterfactuals: the value a set reaches with {share:.0%} of its "
                f"counterfactuals like the worst positive control's and the rest like the best negative one's "
                f"(q + {share:g}·(p − q), p = {_fmt(p, entry.rule)}, q = {_fmt(q, entry.rule)})"
            )
        else:
            bound, basis = (p + q) / 2, "between"
            rule_text = (
                f"between the controls, halfway from the worst positive ({_fmt(p, entry.rule)}) to the best "
                f"negative ({_fmt(q, entry.rule)})"
            )
        # a check must not pass: the bar moves towards the positives, halfway from the check's best
        # passing end to the worst positive's, or there is no bar
        for control in sorted(c for c in entry.triples if expected_sign(c, entry.suite, entry.metric, table) == "x"):
            ends = [lo if higher else hi for _, lo, hi in entry.triples[control]]
            m = best(ends)
            if (m < bound) if higher else (m > bound):
                continue
            told = named.get(control, control)
            if not ((m < p) if higher else (m > p)):
                why = (
                    f"{told} (expected not to pass) reaches {_fmt(m, entry.rule)} at best, as good as the worst positive "
                    f"control ({named.get(pos_control, pos_control)}, {_fmt(p, entry.rule)}): no bar lets every "
                    f"positive control pass and keeps it from passing; {listing}, {over}. What to change: more inputs "
                    "narrow the intervals (a larger profile, or a larger n_per_source in [tool.cfcheck.vce])"
                )
                placements[key] = Placement(None, why, "none", metric=entry.metric, suite=entry.suite)
                break
            bound = (m + p) / 2
            rule_text += (
                f", raised halfway to the worst positive from {_fmt(m, entry.rule)}, the best interval end of {told} "
                "(expected not to pass), so that it does not pass"
            )
        else:
            bar = Bar(bound, kind, entry.rule)
            placements[key] = Placement(
                bar, f"{rule_text}; {listing}; {over}", basis, metric=entry.metric, suite=entry.suite
            )
    _judge(placements, collected, table, named)
    return placements


def _judge(
    placements: dict[str, Placement],
    collected: Mapping[str, _Score],
    table: Mapping[str, Any],
    named: Mapping[str, str],
) -> None:
    """Every control's verdicts under each placed bar (into ``placements``); the verdicts of the
    checks of the bar (x) and of :data:`CHECKS`' controls (on every bar) appended to its rationale."""
    for key, entry in collected.items():
        placement = placements.get(key)
        if placement is None or placement.bar is None:
            continue
        for control, triples in entry.triples.items():
            told = Counter(verdict(m, lo, hi, placement.bar.bound, placement.bar.kind) for m, lo, hi in triples)
            placement.verdicts[control] = dict(told)
        reports = []
        for control in sorted(entry.triples):
            sign = expected_sign(control, entry.suite, entry.metric, table)
            if sign != "x" and control not in CHECKS:
                continue
            counts = placement.verdicts[control]
            total = sum(counts.values())
            expectation = "expected not to pass" if sign == "x" else f"expected {_EXPECTATION.get(sign, 'nothing')}"
            verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
            reports.append(f"{named.get(control, control)} ({expectation}): {verdicts} of {total} task scores")
        if reports:
            placements[key] = placement.but(rationale=placement.rationale + "; " + "; ".join(reports))


def derive_bars(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    domain: str,
    **options: Any,
) -> dict[str, tuple[Bar | None, str]]:
    """Metric key → (bar or None, rationale): :func:`place_bars` without the verdicts (same options)."""
    return {key: (p.bar, p.rationale) for key, p in place_bars(results, profile, domain, **options).items()}
