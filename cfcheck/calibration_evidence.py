"""What the controls measured per metric card: ``<calibration_dir>/calibration-<profile>.json``
(written by ``cfcheck calibrate``, :mod:`cfcheck.calibration`) summarised, so a card's rationale
says why, not how much, and a recalibration needs no prose edit. A card's variants
(``oracle_score:oracle_lenet``, the cascade's stages) are pooled: one bar judges them all, so the
span over all of them is what it must separate; the sentence names them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cfcheck.controls import CONTROLS, SCM_CONTROLS

__all__ = ["CardEvidence", "ControlRange", "load_evidence", "measured_evidence", "render_evidence", "summarise_evidence"]

_SIGNS = ("+", "-", "")
_GROUP_WORDS = {"+": "expected to pass {suites}", "-": "expected to fail {suites}", "": "no expectation"}


@dataclass(frozen=True)
class ControlRange:
    """One control's span over ``count`` scores; ``expected``: "+" / "-" / "" (to pass / fail the suite / neither)."""

    control: str
    expected: str
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class CardEvidence:
    """Every control's span on one card, and the suites, tasks and variants pooled."""

    card_key: str
    suites: tuple[str, ...]
    variants: tuple[str, ...]
    task_count: int
    ranges: tuple[ControlRange, ...]


def _parse(identity: str) -> tuple[str, str, str, str] | None:
    """(suite, card key, variant, task) of an identity key ``kind/domain/suite/metric[task]``."""
    head, bracket, task = identity.partition("[")
    parts = head.split("/", 3)
    ok = bracket and len(parts) == 4 and task.endswith("]")
    return (parts[2], *parts[3].partition(":")[::2], task[:-1]) if ok else None


def summarise_evidence(values: Mapping[str, Mapping[str, Any]], card_key: str) -> CardEvidence | None:
    """Per control, the min and max value over every score of ``card_key`` (variants pooled).

    Args:
        values: identity key ``kind/domain/suite/metric[task]`` → control → ``{"value": float,
            "expected": "+" | "-" | ""}``, the ``values`` of a calibration file.
        card_key: a metric card's key (no variant: ``oracle_score``, not ``oracle_score:oracle_lenet``).

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
    if not isinstance(card_key, str) or not card_key or ":" in card_key:
        raise ValueError(f"`card_key` must be a card's key without a variant, got {card_key!r}")
    if not isinstance(values, Mapping):
        raise ValueError(f"`values` must map identity keys to controls, got {type(values).__name__}")
    spans: dict[tuple[str, str], list[float]] = {}
    suites, variants, tasks = {}, set(), set()  # suites: a dict keeps their order
    for identity, controls in values.items():
        parsed = _parse(str(identity))
        if parsed is None or parsed[1] != card_key:
            continue
        suites[parsed[0]] = None
        variants.update({parsed[2]} - {""})
        tasks.add(parsed[3])
        for control, entry in (controls.items() if isinstance(controls, Mapping) else [("?", controls)]):
            value, sign = (entry.get("value"), entry.get("expected", "")) if isinstance(entry, Mapping) else (None, "")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{identity}: control {control!r} has no finite value: {entry!r}")
            if sign not in _SIGNS:
                raise ValueError(f"{identity}: control {control!r} has expected {sign!r}, not '+', '-' or ''")
            spans.setdefault((sign, str(control)), []).append(float(value))
    rank = {name: i for i, name in enumerate([*CONTROLS, *SCM_CONTROLS])}  # others after them, as found
    ordered = sorted(spans, key=lambda group: (_SIGNS.index(group[0]), rank.get(group[1], len(rank))))
    ranges = tuple(ControlRange(control, sign, min(spans[sign, control]), max(spans[sign, control]),
                                len(spans[sign, control])) for sign, control in ordered)
    return CardEvidence(card_key, tuple(suites), tuple(sorted(variants)), len(tasks), ranges) if ranges else None


def _span(low: float, high: float) -> str:
    """"0.958–1", "−0.03 to 0.13", or one value where both ends agree to three figures."""
    first, last = (f"{value + 0.0:.3g}".replace("-", "−") for value in (low, high))  # + 0.0: no "−0"
    return first if first == last else f"{first} to {last}" if min(low, high) < 0 else f"{first}–{last}"


def render_evidence(evidence: CardEvidence, *, profile: str, domain: str | None = None) -> str:
    """One sentence: what each control reached, grouped by whether it is expected to pass.

    Args:
        evidence: a card's spans (:func:`summarise_evidence`).
        profile: the profile the values were measured at.
        domain: the domain they were measured on; None leaves it out (a caller that names it).

    Returns:
        ``"on <domain>, <profile> profile (…): expected to pass <suite> — …; expected to fail
        <suite> — …; no expectation — …"``; values to three significant figures, one value where
        both ends agree, controls with the same span together ("truth, truth_rejecting 1").

    Example:
        >>> print(render_evidence(CardEvidence("tcv", ("validity",), (), 2, (
        ...     ControlRange("truth", "+", 0.9833, 1.0, 2), ControlRange("identity", "-", 0.0, 0.0, 2))),
        ...     profile="quick", domain="morpho"))
        on morpho, quick profile (`cfcheck calibrate`, 2 task scores per control): expected to pass validity — truth 0.983–1; expected to fail validity — identity 0
    """
    if not isinstance(evidence, CardEvidence) or not evidence.ranges:
        raise ValueError(f"`evidence` must be a non-empty CardEvidence, got {evidence!r}")
    if not isinstance(profile, str) or not profile:
        raise ValueError(f"`profile` must be a profile name, got {profile!r}")
    counts = {span.count for span in evidence.ranges}
    noun = "task score" if len(evidence.variants) <= 1 else "score"
    detail = (f"{next(iter(counts))} {noun}{'s' * (counts != {1})} per control" if len(counts) == 1
              else f"{noun}s per control in brackets")
    if evidence.variants:
        detail += (f", variant {evidence.variants[0]}" if len(evidence.variants) == 1 else
                   f": {evidence.task_count} tasks, variants {', '.join(evidence.variants)} pooled")
    head = f"{profile} profile (`cfcheck calibrate`, {detail})"
    groups = []
    for sign in _SIGNS:
        shared: dict[str, list[str]] = {}  # the span's text → the controls that reached it
        for span in (s for s in evidence.ranges if s.expected == sign):
            text = _span(span.low, span.high) + (f" ({span.count})" if len(counts) > 1 else "")
            shared.setdefault(text, []).append(span.control)
        if shared:
            word = _GROUP_WORDS[sign].format(suites=" / ".join(evidence.suites))
            groups.append(f"{word} — " + ", ".join(f"{', '.join(names)} {text}" for text, names in shared.items()))
    return (f"on {domain}, {head}" if domain else head) + ": " + "; ".join(groups)


@lru_cache(maxsize=64)
def _read_values(path: str, modified_ns: int) -> tuple[Mapping[str, Any], str]:
    """The values and profile of a calibration file (re-read only when the file changes)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable calibration file: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
        raise ValueError(f"{path}: expected {{'profile': ..., 'domain': ..., 'values': {{score: controls}}}}")
    return data["values"], str(data.get("profile", ""))


def load_evidence(domain: Any, key: str, profile: str = "quick") -> tuple[CardEvidence, str] | None:
    """:func:`summarise_evidence` of ``key`` in ``domain``'s calibration file of ``profile`` and the
    profile the file records, as :func:`measured_evidence` (which renders it) reads them."""
    folder = getattr(domain, "calibration_dir", None)
    path = Path(folder or ".") / f"calibration-{profile}.json"
    if folder is None or not path.is_file():
        return None
    values, recorded_profile = _read_values(str(path), path.stat().st_mtime_ns)
    try:
        evidence = summarise_evidence(values, key)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
    return (evidence, recorded_profile or profile) if evidence is not None else None


def measured_evidence(domain: Any, key: str, profile: str = "quick") -> str | None:
    """The sentence of :func:`render_evidence` for card ``key`` from ``domain``'s calibration file.

    Args:
        domain: a domain object (its ``name`` and ``calibration_dir``; None: it keeps no file).
        key: a metric card's key.
        profile: reads ``<calibration_dir>/calibration-<profile>.json`` (once per change of the file).

    Returns:
        The sentence; None without a calibration file for ``profile`` or a score of ``key`` in it.

    Raises:
        ValueError: naming the file, where it is not a calibration file or an entry is malformed.

    Example:
        >>> from cfcheck.domains import get_domain
        >>> measured_evidence(get_domain("morpho"), "target_accuracy").startswith("on morpho, quick profile")
        True
    """
    found = load_evidence(domain, key, profile)
    return render_evidence(found[0], profile=found[1], domain=str(domain.name)) if found is not None else None
