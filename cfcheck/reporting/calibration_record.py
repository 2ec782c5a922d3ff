"""What a run records of the controls in its scorecard's ``calibration`` section (the format is
:mod:`cfcheck.reporting.calibration_section`'s): gathered from the calibration folders of the run's
domains when the scorecard is written (:func:`collect_calibration`), the only moment a domain is looked
up for the pages; ``cfcheck render --recalibrate`` and ``cfcheck calibrate`` gather it again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cfcheck.core.keys import MetricKey, ScoreId
from cfcheck.reporting.calibration_section import SIGNS, markers_of_entry

__all__ = ["collect_calibration"]


def _controls(domain: str, profile: str, scores: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Score identity → sign → control → value of the controls with a sign on ``scores`` (all of
    ``domain``), from the domain's ``calibration-<profile>.json``
    (:func:`~cfcheck.calibration.store.load_calibration_values`: {} where the domain keeps none or it
    is damaged, which costs the charts their markers, nothing else)."""
    from cfcheck.calibration.store import load_calibration_values

    values = load_calibration_values({"profile": {"name": profile}, "scores": [{"domain": domain}]})
    found: dict[str, Any] = {}
    for score in scores:
        try:
            key = ScoreId.from_score(score).serialise()
        except ValueError:
            continue
        markers = markers_of_entry(values.get(key))
        if markers:
            found[key] = {
                sign: {m.control: m.value for m in markers if m.expected == sign}
                for sign in SIGNS
                if any(m.expected == sign for m in markers)
            }
    return found


def _evidence(domain: str, summary: Mapping[str, Any], scores: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Card key → evidence rows (:meth:`EvidenceRow.to_dict`) of each metric card of ``scores`` on
    ``domain`` (a domain the scorecard's profile records facts of; {} otherwise)."""
    from cfcheck.kinds.registry import loaded_cards
    from cfcheck.reporting.card_evidence import domain_evidence

    facts = summary.get("domains") or {}
    if domain not in facts:
        return {}
    cards = loaded_cards()
    keys = [key for key in dict.fromkeys(MetricKey.card_part(s.get("metric")) for s in scores) if key in cards]
    found = {}
    for key in keys:
        rows = domain_evidence(domain, facts[domain], key, str(summary.get("name") or "quick"))
        if rows:
            found[key] = [row.to_dict() for row in rows]
    return found


def collect_calibration(scorecard: Mapping[str, Any]) -> dict[str, Any]:
    """The ``calibration`` section of ``scorecard`` (a scorecard JSON: its scores and profile), gathered
    from the calibration folders of its domains as they are on this machine now.

    Args:
        scorecard: the scorecard JSON (``scores``; ``profile.name`` and ``profile.domains``).

    Returns:
        ``"kind/domain"`` → entry (see the module's docstring) for each (kind, domain) of the scores
        (scores without a kind or a domain have none); an entry that could not be gathered holds its
        ``error``: collecting never stops the write.
    """
    summary = scorecard.get("profile") or {}
    summary = summary if isinstance(summary, Mapping) else {}
    profile = str(summary.get("name", "") or "")
    pairs: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for score in scorecard.get("scores") or []:
        if isinstance(score, Mapping):
            pairs.setdefault((str(score.get("kind", "-")), str(score.get("domain", "-"))), []).append(score)
    section: dict[str, Any] = {}
    for (kind, domain), scores in sorted(pairs.items()):
        if "-" in (kind, domain) or "/" in kind or "/" in domain:
            continue
        try:
            entry = {"profile": profile, "controls": _controls(domain, profile, scores)}
            entry["evidence"] = _evidence(domain, summary, scores)
        except Exception as error:  # noqa: BLE001 - the scorecard is written anyway, saying why
            entry = {"profile": profile, "error": f"{type(error).__name__}: {error}"}
        section[f"{kind}/{domain}"] = entry
    return section
