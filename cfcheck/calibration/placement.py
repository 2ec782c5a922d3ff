"""Where a domain's bars go, from what calibration controls reached on it: the one rule every kind's
domain calibration uses (a kind supplies its :class:`PlacementRules`: which control is expected to
pass or fail which score, which scores take the share rule, which get no bar and why).

Each control is expected to pass (+) or fail (−) a score, not to pass it (x: a check, which places no
bar), or nothing (""). Per score, over every task and seed, ``p`` is the **worst passing** 95%
interval end of the controls expected to pass it (the low end of a higher-is-better score) and ``q``
the **best failing** end of those expected to fail it. A bar is placed only where ``p`` lies on the
good side of ``q``, so that every positive control passes and every negative one fails on the
calibration runs, conclusively, on every seed; where they overlap, the score keeps no bar and the
reason names the two controls and what would separate them (the kind's advice). Three rules place it:

- **share** (means over counterfactuals of a right-or-wrong kind, :attr:`PlacementRules.is_share`):
  ``q + share·(p − q)``, the value a set reaches with that share of its counterfactuals like the
  worst positive control's and the rest like the best negative one's;
- **between** (any other score): halfway, ``(p + q) / 2``;
- **comparison** (where the kind names a baseline for a suite, :attr:`PlacementRules.comparison`,
  and no positive control is expected to pass the score): the baseline's best interval end, a named
  comparison rather than an earned separation, and its rationale says so.

A check (sign x) places no bar but must not pass it: where the bar would let it pass, the bar moves
halfway from the check's best interval end to the worst positive's, and where the check reaches the
positives there is no bar. Each bar reports the checks' verdicts on the calibration runs.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cfcheck.core.thresholds import Bar, FloorRule
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.stats import verdict

if TYPE_CHECKING:
    from cfcheck.metrics.card import MetricCard

__all__ = [
    "Placement",
    "PlacementRules",
    "barred_or_raise",
    "comparable_value",
    "expected_sign",
    "place_bars",
]

#: [(suite or card key, sign)] per control: "+" pass, "-" fail, "x" not pass (a check), "" nothing
Expectations = Mapping[str, Sequence[tuple[str, str]]]


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


def _no_advice(key: str, suite: str, positive: str, negative: str, values_separate: bool) -> str:
    return "more inputs narrow the intervals (a larger profile)"


@dataclass(frozen=True)
class PlacementRules:
    """What a kind tells the placement.

    Attributes:
        expected: control → [(suite or card key, sign)] (a card entry overrides its suite's).
        share: the share of right counterfactuals a share-rule bar asks for, in (0, 1).
        is_share: ``(card, suite)`` → whether the share rule applies (a mean over counterfactuals of
            a right-or-wrong kind).
        unbarred: card → why its scores get no bar.
        judged: controls whose verdicts every bar's rationale reports (besides each bar's checks).
        comparison: suite → the control whose best interval end is the bar where no positive control
            is expected to pass the score (a comparison with a baseline).
        comparison_why: ``(baseline, bound as text, what the values are over)`` → the rationale of a
            comparison bar.
        advice: ``(key, suite, positive, negative, values separate)`` → what would separate two
            controls that overlap.
        more_inputs: what to change where a check reaches the positives (more inputs, and where to
            set them).
        no_positive: ``(key, suite)`` → why a score no positive control is expected to pass has no
            bar, and what would earn one; None: only that no positive control is expected to pass it.
    """

    expected: Expectations
    share: float = 0.8
    is_share: Callable[[str, str], bool] = lambda card, suite: False
    unbarred: Mapping[str, str] = field(default_factory=dict)
    judged: tuple[str, ...] = ()
    comparison: Mapping[str, str] = field(default_factory=dict)
    comparison_why: Callable[[str, str, str], str] | None = None
    advice: Callable[[str, str, str, str, bool], str] = _no_advice
    more_inputs: str = "more inputs narrow the intervals (a larger profile)"
    no_positive: Callable[[str, str], str] | None = None


def expected_sign(control: str, suite: str, metric: str, table: Expectations) -> str:
    """ "+", "-", "x" or "" for ``control`` on a score of ``suite`` named ``metric`` (``key`` or
    ``key:variant``), by ``table`` (a card entry overrides its suite's)."""
    rules = dict(table.get(control, []))
    return rules.get(MetricKey.parse(metric).card, rules.get(suite, ""))


def comparable_value(score: dict[str, Any], card: Any, profile: str, field: str = "value") -> tuple[float, FloorRule]:
    """The score's ``field`` ("value", "ci_low" or "ci_high"; the value where the interval end is
    missing) as a bar compares it, and the bar's relative rule: ÷ floor for a ``times_floor`` card
    bar, − floor for ``plus_floor``, else as it is. The floor is the one the realism suite judges by:
    the lowest floor draw for a higher-is-better score, the highest for a lower-is-better one."""
    end = score.get(field)
    value = float(end if isinstance(end, (int, float)) and math.isfinite(end) else score["value"])
    bar = card.bar_for(profile) if card is not None else None
    floors = (score.get("extra") or {}).get("real_floor")
    if bar is not None and bar.relative != "absolute" and floors:
        floor = (min if card.direction == "higher" else max)(float(f) for f in floors)
        if bar.relative == "times_floor" and floor > 0:
            return value / floor, "times_floor"
        if bar.relative == "plus_floor":
            return value - floor, "plus_floor"
    return value, "absolute"


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
    runs: Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    domain: str,
    table: Expectations,
    cards: Mapping[str, MetricCard],
) -> dict[str, _Score]:
    found: dict[str, _Score] = {}
    for control, scorecard in ((c, card) for run in runs for c, card in run.items()):
        for score in scorecard["scores"]:
            value = score.get("value")
            if score.get("domain") != domain or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            metric = str(score["metric"])
            card = cards.get(MetricKey.parse(metric).card)
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


def _fmt(value: float, rule: FloorRule) -> str:
    """A bar's value as its rationale writes it (with its floor-relative unit)."""
    unit = " × floor" if rule == "times_floor" else (" above the floor" if rule == "plus_floor" else "")
    return f"{value:.4g}{unit}"


def barred_or_raise(
    placements: Mapping[str, Placement], unbarred: Mapping[str, str], domain: str, values_path: Any, what: str
) -> dict[str, tuple[Bar, str]]:
    """Metric key → (bar, rationale) of every placement that earned a bar.

    Args:
        placements: the placed bars (:func:`place_bars`).
        unbarred: metric key → why it earned no bar (quoted in the error).
        domain: the domain's name.
        values_path: where the controls' values were written (named in the error).
        what: which scores, for the error ("score", "SCM score").

    Raises:
        RuntimeError: where no score earned a bar: nothing is to be written to the bars file.
    """
    barred = {key: (p.bar, p.rationale) for key, p in placements.items() if p.bar is not None}
    if not barred:
        raise RuntimeError(
            f"no {what} earned a bar on domain {domain!r}: the controls overlap on every score, so nothing "
            f"was written to its bars file (the controls' values are in {values_path}). "
            + " | ".join(f"{key}: {why}" for key, why in sorted(unbarred.items())[:3])
        )
    return barred


def place_bars(
    results: Mapping[str, dict[str, Any]] | Sequence[Mapping[str, dict[str, Any]]],
    profile: str,
    domain: str,
    rules: PlacementRules,
    *,
    cards: Mapping[str, MetricCard],
    names: Mapping[str, str] | None = None,
) -> dict[str, Placement]:
    """Metric key (``card`` or ``card:variant``) → :class:`Placement`, from control scorecards.

    Args:
        results: control → scorecard, or a sequence of such, one per seed (every task score of
            every seed counts).
        profile: the profile the controls ran at (a floor-relative bar's rule is its card's there).
        domain: the domain's name (scores of other domains are ignored).
        rules: the kind's expectations and rules (:class:`PlacementRules`).
        cards: every metric card, the kinds' own included (``cfcheck.kinds.registry.loaded_cards()``):
            a score's direction and bars are its card's; a score without a card places no bar.
        names: control → how the rationale names it (default: the control's own name).

    Returns:
        One placement per score any control reached.

    Raises:
        ValueError: if ``rules.share`` is not in (0, 1) or ``results`` holds no scorecard.
    """
    share = rules.share
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < share < 1.0:
        raise ValueError(f"`share` must be a number in (0, 1), got {share!r}")
    runs = [results] if isinstance(results, Mapping) else list(results)
    if not runs or not all(isinstance(run, Mapping) for run in runs):
        raise ValueError("`results` must be control → scorecard, or a non-empty sequence of such, one per seed")
    table = rules.expected
    named = dict(names or {})
    seeds = f", {len(runs)} seeds" if len(runs) > 1 else ""
    placements: dict[str, Placement] = {}
    collected = _collect(runs, profile, domain, table, cards)
    for key, entry in sorted(collected.items()):
        placements[key] = _place(key, entry, rules, named, domain, profile, seeds)
    _judge(placements, collected, rules, named)
    return placements


def _place(
    key: str, entry: _Score, rules: PlacementRules, named: Mapping[str, str], domain: str, profile: str, seeds: str
) -> Placement:
    """One score's placement (see the module docstring)."""
    table = rules.expected
    signs = {c: expected_sign(c, entry.suite, entry.metric, table) for c in entry.ends}
    higher = entry.card.direction == "higher"
    worst, best = (min, max) if higher else (max, min)
    positives = {c: worst(entry.ends[c]) for c, s in signs.items() if s == "+"}
    negatives = {c: best(entry.ends[c]) for c, s in signs.items() if s == "-"}
    over = f"over {entry.tasks} task scores of {len(signs)} controls{seeds} on domain {domain!r} ({profile} profile)"
    listing = (
        "positives (expected to pass; worst 95% interval end): "
        + ", ".join(f"{named.get(c, c)} {_fmt(v, entry.rule)}" for c, v in positives.items())
        + "; negatives (expected to fail; best end): "
        + ", ".join(f"{named.get(c, c)} {_fmt(v, entry.rule)}" for c, v in negatives.items())
    )
    kind = "min" if higher else "max"
    card_key = MetricKey.parse(entry.metric).card
    if card_key in rules.unbarred:
        return Placement(None, rules.unbarred[card_key], "none", metric=entry.metric, suite=entry.suite)
    if not negatives:
        return Placement(
            None, "no negative control is expected to fail it", "none", metric=entry.metric, suite=entry.suite
        )
    if not positives:
        baseline = rules.comparison.get(entry.suite)
        if baseline is None or baseline not in negatives or rules.comparison_why is None:
            why = "no positive control is expected to pass it"
            if rules.no_positive is not None:
                why = rules.no_positive(key, entry.suite)
            return Placement(None, why, "none", metric=entry.metric, suite=entry.suite)
        bound = negatives[baseline]
        why = rules.comparison_why(baseline, _fmt(bound, entry.rule), over)
        return Placement(Bar(bound, kind, entry.rule), why, "comparison", metric=entry.metric, suite=entry.suite)
    pos_control, p = worst(positives.items(), key=lambda cv: cv[1])
    neg_control, q = best(negatives.items(), key=lambda cv: cv[1])
    if not ((p > q) if higher else (p < q)):
        pos_mid = worst(m for m, _, _ in entry.triples[pos_control])
        neg_mid = best(m for m, _, _ in entry.triples[neg_control])
        separate = (pos_mid > neg_mid) if higher else (pos_mid < neg_mid)
        advice = rules.advice(key, entry.suite, named.get(pos_control, pos_control), neg_control, separate)
        why = (
            f"the controls overlap: {named.get(pos_control, pos_control)} (expected to pass) reaches "
            f"{_fmt(p, entry.rule)} at worst, {neg_control} (expected to fail) {_fmt(q, entry.rule)} at best; "
            f"{listing}, {over}. What to change: {advice}"
        )
        return Placement(None, why, "none", metric=entry.metric, suite=entry.suite)
    if rules.is_share(card_key, entry.suite):
        bound, basis = q + rules.share * (p - q), "share"
        rule_text = (
            f"asks for {rules.share:.0%} right counterfactuals: the value a set reaches with {rules.share:.0%} of "
            f"its counterfactuals like the worst positive control's and the rest like the best negative one's "
            f"(q + {rules.share:g}·(p − q), p = {_fmt(p, entry.rule)}, q = {_fmt(q, entry.rule)})"
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
                f"positive control pass and keeps it from passing; {listing}, {over}. What to change: "
                f"{rules.more_inputs}"
            )
            return Placement(None, why, "none", metric=entry.metric, suite=entry.suite)
        bound = (m + p) / 2
        rule_text += (
            f", raised halfway to the worst positive from {_fmt(m, entry.rule)}, the best interval end of {told} "
            "(expected not to pass), so that it does not pass"
        )
    return Placement(
        Bar(bound, kind, entry.rule), f"{rule_text}; {listing}; {over}", basis, metric=entry.metric, suite=entry.suite
    )


def _judge(
    placements: dict[str, Placement],
    collected: Mapping[str, _Score],
    rules: PlacementRules,
    named: Mapping[str, str],
) -> None:
    """Every control's verdicts under each placed bar (into ``placements``); the verdicts of the
    checks of the bar (x) and of :attr:`PlacementRules.judged`'s controls (on every bar) appended to
    its rationale."""
    table = rules.expected
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
            if sign != "x" and control not in rules.judged:
                continue
            counts = placement.verdicts[control]
            total = sum(counts.values())
            expectation = "expected not to pass" if sign == "x" else f"expected {_EXPECTATION.get(sign, 'nothing')}"
            verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
            reports.append(f"{named.get(control, control)} ({expectation}): {verdicts} of {total} task scores")
        if reports:
            placements[key] = placement.but(rationale=placement.rationale + "; " + "; ".join(reports))
