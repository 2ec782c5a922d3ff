"""What the controls measured on one metric card, as a summary (:class:`CardEvidence`: each
control's span of values, grouped by what it is expected to do) and as one sentence
(:func:`render_evidence`).

Two shapes of values are summarised: per task score (:func:`summarise_evidence`, the values of
``cfcheck calibrate``: a card's variants pooled, one bar judges them all) and per seed
(:func:`summarise_seed_evidence`, a kind's domain calibration that keeps values per seed, grouped by
role: positive, the noise ladder, negative). The controls come in the bundled controls' order
(:func:`cfcheck.controls.control_order`). Where they are read from is :mod:`cfcheck.reporting.evidence`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cfcheck.controls import control_order
from cfcheck.core.keys import MetricKey, ScoreId

__all__ = [
    "CardEvidence",
    "ControlRange",
    "render_evidence",
    "split_score_key",
    "summarise_evidence",
    "summarise_seed_evidence",
]

_SIGNS = ("+", "-", "")
#: the groups of a sentence, in order: a role "ladder:<ratio>" is in the group "ladder"
_GROUPS = ("+", "ladder", "-", "")
#: a group's words where the values belong to suites (a control is expected to pass or fail them) …
_GROUP_WORDS = {"+": "expected to pass {suites}", "-": "expected to fail {suites}", "": "no expectation"}
#: … and where they belong to roles (a control's answer is known by construction)
_ROLE_WORDS = {
    "+": "positive",
    "ladder": "the noise ladder (the signal plus noise of that many times its norm)",
    "-": "negative",
    "": "no expectation",
}
#: the command that measured values per task score
COMMAND = "cfcheck calibrate"


@dataclass(frozen=True)
class ControlRange:
    """One control's span over ``count`` scores; ``expected``: "+" / "-" / "" (to pass / fail the suite
    / neither), or "ladder:<ratio>" (a rung of the noise ladder, a positive control)."""

    control: str
    expected: str
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class CardEvidence:
    """Every control's span on one card, and the suites, tasks and variants pooled; ``unit``: what one
    value is (a task score, a seed), ``command``: what measured them, ``without_bar``: the
    calibration's reason for giving no bar (empty where it gave one or says nothing)."""

    card_key: str
    suites: tuple[str, ...]
    variants: tuple[str, ...]
    task_count: int
    ranges: tuple[ControlRange, ...]
    unit: str = "task score"
    command: str = COMMAND
    without_bar: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The summary as a scorecard keeps it (its ``calibration`` section); :meth:`from_dict` reads it back."""
        return {
            "card_key": self.card_key,
            "suites": list(self.suites),
            "variants": list(self.variants),
            "task_count": self.task_count,
            "ranges": [
                {"control": r.control, "expected": r.expected, "low": r.low, "high": r.high, "count": r.count}
                for r in self.ranges
            ],
            "unit": self.unit,
            "command": self.command,
            "without_bar": self.without_bar,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CardEvidence:
        """The summary :meth:`to_dict` wrote.

        Raises:
            ValueError: ``data`` is not such a summary (the message says what is wrong).
        """
        try:
            ranges = tuple(
                ControlRange(str(r["control"]), str(r["expected"]), float(r["low"]), float(r["high"]), int(r["count"]))
                for r in data["ranges"]
            )
            return cls(
                str(data["card_key"]),
                tuple(str(s) for s in data.get("suites") or ()),
                tuple(str(v) for v in data.get("variants") or ()),
                int(data.get("task_count") or 0),
                ranges,
                unit=str(data.get("unit") or "task score"),
                command=str(data.get("command") or COMMAND),
                without_bar=str(data.get("without_bar") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"not a card's evidence summary ({type(error).__name__}: {error}): {data!r}") from None


def _parse(identity: str) -> ScoreId | None:
    """The score an identity key ``kind/domain/suite/metric[task]`` names; None where ``identity`` is not one."""
    try:
        return ScoreId.parse(identity)
    except ValueError:
        return None


def _check_card_key(card_key: Any) -> None:
    if not isinstance(card_key, str) or not card_key or ":" in card_key:
        raise ValueError(f"`card_key` must be a card's key without a variant, got {card_key!r}")


def _finite(value: Any, where: str) -> float:
    """``value`` as a float, or a ValueError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where} has no finite value: {value!r}")
    return float(value)


def _group(role: str) -> str:
    """The sentence group of a role: "+", "-", "" or "ladder" (for "ladder:<ratio>")."""
    head, _, ratio = role.partition(":")
    if role in _SIGNS or (head == "ladder" and ratio.replace(".", "", 1).isdigit()):
        return head
    raise ValueError(f"a control's role must be '+', '-', '' or 'ladder:<ratio>', got {role!r}")


def _ordered(spans: Mapping[tuple[str, str], list[float]]) -> tuple[ControlRange, ...]:
    """The spans by group, then the bundled controls' order (a ladder by its ratio, others as found)."""
    rank = {name: i for i, name in enumerate(control_order())}

    def order(group: tuple[str, str]) -> tuple[int, float]:
        role, control = group
        ratio = float(role.partition(":")[2]) if _group(role) == "ladder" else rank.get(control, len(rank))
        return _GROUPS.index(_group(role)), ratio

    return tuple(
        ControlRange(control, role, min(spans[role, control]), max(spans[role, control]), len(spans[role, control]))
        for role, control in sorted(spans, key=order)
    )


def summarise_evidence(
    values: Mapping[str, Mapping[str, Any]], card_key: str, commands: Mapping[str, str] | None = None
) -> CardEvidence | None:
    """Per control, the min and max value over every score of ``card_key`` (variants pooled).

    Args:
        values: identity key ``kind/domain/suite/metric[task]`` → control → ``{"value": float,
            "expected": "+" | "-" | ""}``, the ``values`` of a calibration file.
        card_key: a metric card's key (no variant: ``oracle_score``, not ``oracle_score:oracle_lenet``).
        commands: method kind → the command that measured its values (the file's ``commands``;
            ``cfcheck calibrate`` where a kind has none).

    Returns:
        The spans by expected sign ("+", "-", "") and then in the bundled controls' order (others
        after them); None when ``values`` holds no score of ``card_key``.

    Raises:
        ValueError: for a card key with a variant, a value that is not finite, a sign not "+"/"-"/"".

    Example:
        >>> values = {"vce/d/validity/tcv[cnn/a]": {"truth": {"value": 1.0, "expected": "+"}},
        ...           "vce/d/validity/tcv[cnn/b]": {"truth": {"value": 0.9, "expected": "+"}}}
        >>> summarise_evidence(values, "tcv").ranges
        (ControlRange(control='truth', expected='+', low=0.9, high=1.0, count=2),)
    """
    _check_card_key(card_key)
    if not isinstance(values, Mapping):
        raise ValueError(f"`values` must map identity keys to controls, got {type(values).__name__}")
    if commands is not None and not isinstance(commands, Mapping):
        raise ValueError(f"`commands` must map method kinds to commands, got {type(commands).__name__}")
    spans: dict[tuple[str, str], list[float]] = {}
    suites: dict[str, None] = {}
    kinds: dict[str, None] = {}
    variants, tasks = set(), set()  # suites, kinds: a dict keeps their order
    for identity, controls in values.items():
        parsed = _parse(str(identity))
        if parsed is None or parsed.metric.card != card_key:
            continue
        suites[parsed.suite] = kinds[parsed.kind] = None
        variants.update({parsed.metric.variant or ""} - {""})
        tasks.add(parsed.task)
        for control, entry in controls.items() if isinstance(controls, Mapping) else [("?", controls)]:
            value, sign = (entry.get("value"), entry.get("expected", "")) if isinstance(entry, Mapping) else (None, "")
            value = _finite(value, f"{identity}: control {control!r}")
            if sign not in _SIGNS:
                raise ValueError(f"{identity}: control {control!r} has expected {sign!r}, not '+', '-' or ''")
            spans.setdefault((sign, str(control)), []).append(value)
    if not spans:
        return None
    command = str((commands or {}).get(next(iter(kinds)), COMMAND)) if len(kinds) == 1 else COMMAND
    return CardEvidence(card_key, tuple(suites), tuple(sorted(variants)), len(tasks), _ordered(spans), command=command)


def split_score_key(score_key: str, card_keys: Iterable[str]) -> tuple[str, str]:
    """(card key, variant) of a score key of a values file per seed.

    Args:
        score_key: ``card:variant``, ``card``, or ``card_variant`` (a values file written before one spelling:
            ``road_gap_morf``; :meth:`~cfcheck.core.keys.MetricKey.read`).
        card_keys: the known card keys: ``card_variant`` is split after the longest of them it starts
            with, so a card whose key extends another's (``x_support`` beside ``x``) keeps its own.

    Returns:
        The card key and the variant ("" for none); ``(score_key, "")`` where no known key matches.

    Example:
        >>> split_score_key("road_gap_morf", ["road_gap", "road_area"]), split_score_key("road_gap:lerf", [])
        (('road_gap', 'morf'), ('road_gap', 'lerf'))
        >>> split_score_key("similarity_support", ["similarity", "similarity_support"])
        ('similarity_support', '')
    """
    if not isinstance(score_key, str) or not score_key:
        raise ValueError(f"`score_key` must be a non-empty string, got {score_key!r}")
    key = MetricKey.read(score_key, card_keys)
    return key.card, key.variant or ""


def summarise_seed_evidence(
    data: Mapping[str, Any], card_key: str, card_keys: Iterable[str] = (), *, command: str = COMMAND
) -> tuple[CardEvidence, ...]:
    """Per variant of ``card_key``, each control's min and max value over the seeds, by role.

    Args:
        data: a values file per seed (a kind's domain calibration's): ``values`` (score key → control → seed → float),
            ``roles`` (control → "+", "-" or "ladder:<ratio>"; a control without one has no
            expectation) and ``without_bar`` (score key → why it got no bar).
        card_key: a metric card's key (no variant).
        card_keys: the known card keys, to split a score key (:func:`split_score_key`).
        command: the command that measured the values (``cfcheck calibrate --kind <kind>``).

    Returns:
        One summary per variant ("" for a score without one), in variant order; empty where the
        file holds no score of ``card_key``.

    Raises:
        ValueError: for a card key with a variant, a malformed file, a value that is not finite, a
            role not "+", "-", "" or "ladder:<ratio>".

    Example:
        >>> data = {"roles": {"signal": "+", "signal + noise 2": "ladder:2", "random": "-"},
        ...         "values": {"gap_a": {"signal": {"0": 0.5, "1": 0.4}, "signal + noise 2": {"0": 0.2},
        ...                              "random": {"0": 0.01, "1": -0.02}}}}
        >>> [span.expected + " " + span.control for span in summarise_seed_evidence(data, "gap", ["gap"])[0].ranges]
        ['+ signal', 'ladder:2 signal + noise 2', '- random']
    """
    _check_card_key(card_key)
    parts = [data.get(name) if isinstance(data, Mapping) else None for name in ("values", "roles", "without_bar")]
    if not isinstance(parts[0], Mapping) or not all(isinstance(part, (Mapping, type(None))) for part in parts[1:]):
        raise ValueError(
            "expected {'values': {score: {control: {seed: value}}}, 'roles': {control: role}, "
            "'without_bar': {score: reason}}"
        )
    values, roles, reasons = parts[0], parts[1] or {}, parts[2] or {}
    known = {*card_keys, card_key}
    by_variant: dict[str, dict[tuple[str, str], list[float]]] = {}
    for score, controls in values.items():
        card, variant = split_score_key(str(score), known)
        if card != card_key:
            continue
        if not isinstance(controls, Mapping) or not all(isinstance(seeds, Mapping) for seeds in controls.values()):
            raise ValueError(f"{score}: expected control → seed → value, got {controls!r}")
        spans = by_variant.setdefault(variant, {})
        for control, seeds in controls.items():
            role = str(roles.get(control, ""))
            _group(role)
            spans.setdefault((role, str(control)), []).extend(
                _finite(value, f"{score}: control {control!r}, seed {seed}") for seed, value in seeds.items()
            )
    reason = {split_score_key(str(score), known): str(why) for score, why in reasons.items()}
    return tuple(
        CardEvidence(
            card_key,
            (),
            (variant,) if variant else (),
            0,
            _ordered(spans),
            unit="seed",
            command=command,
            without_bar=reason.get((card_key, variant), ""),
        )
        for variant, spans in sorted(by_variant.items())
        if spans
    )


def _span(low: float, high: float) -> str:
    """ "0.958–1", "−0.03 to 0.13", or one value where both ends agree to three figures."""
    first, last = (f"{value + 0.0:.3g}".replace("-", "−") for value in (low, high))  # + 0.0: no "−0"
    return first if first == last else f"{first} to {last}" if min(low, high) < 0 else f"{first}–{last}"


def render_evidence(evidence: CardEvidence, *, profile: str, domain: str | None = None) -> str:
    """One sentence: what each control reached, grouped by whether it is expected to pass.

    Args:
        evidence: a card's spans (:func:`summarise_evidence`, :func:`summarise_seed_evidence`).
        profile: the profile the values were measured at.
        domain: the domain they were measured on; None leaves it out (a caller that names it).

    Returns:
        ``"on <domain>, <profile> profile (…): expected to pass <suite> — …; expected to fail
        <suite> — …; no expectation — …"`` (values of suites), or ``"…: positive — …; the noise
        ladder (…) — …; negative — …; no bar: <reason>"`` (values of roles); values to three
        significant figures, one value where both ends agree, controls with the same span
        together ("truth, truth_rejecting 1"), a colon after names with a space in them.

    Example:
        >>> print(render_evidence(CardEvidence("tcv", ("validity",), (), 2, (
        ...     ControlRange("truth", "+", 0.9833, 1.0, 2), ControlRange("identity", "-", 0.0, 0.0, 2))),
        ...     profile="quick", domain="mine"))
        on mine, quick profile (`cfcheck calibrate`, 2 task scores per control): expected to pass validity — truth 0.983–1; expected to fail validity — identity 0
    """
    if not isinstance(evidence, CardEvidence) or not evidence.ranges:
        raise ValueError(f"`evidence` must be a non-empty CardEvidence, got {evidence!r}")
    if not isinstance(profile, str) or not profile:
        raise ValueError(f"`profile` must be a profile name, got {profile!r}")
    counts = {span.count for span in evidence.ranges}
    noun = "score" if evidence.unit == "task score" and len(evidence.variants) > 1 else evidence.unit
    detail = (
        f"{next(iter(counts))} {noun}{'s' * (counts != {1})} per control"
        if len(counts) == 1
        else f"{noun}s per control in brackets"
    )
    if evidence.variants:
        detail += (
            f", variant {evidence.variants[0]}"
            if len(evidence.variants) == 1
            else f": {evidence.task_count} tasks, variants {', '.join(evidence.variants)} pooled"
        )
    head = f"{profile} profile (`{evidence.command}`, {detail})"
    words = _GROUP_WORDS if evidence.suites else _ROLE_WORDS
    colon = ":" if any(" " in span.control for span in evidence.ranges) else ""
    groups = []
    for group in _GROUPS:
        shared: dict[str, list[str]] = {}  # the span's text → the controls that reached it
        for span in (s for s in evidence.ranges if _group(s.expected) == group):
            text = _span(span.low, span.high) + (f" ({span.count})" if len(counts) > 1 else "")
            shared.setdefault(text, []).append(span.control)
        if shared:
            word = words[group].format(suites=" / ".join(evidence.suites))
            groups.append(
                f"{word} — " + ", ".join(f"{', '.join(names)}{colon} {text}" for text, names in shared.items())
            )
    if evidence.without_bar:
        groups.append(f"no bar: {evidence.without_bar}")
    return (f"on {domain}, {head}" if domain else head) + ": " + "; ".join(groups)
