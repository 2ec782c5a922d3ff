"""Where the metric cards are shown, what the controls measured beside them: on every bundled
domain (``cfcheck cards``) and on every domain a scorecard names (recorded in the scorecard's
``calibration`` section when it is written, :mod:`cfcheck.reporting.calibration_record`, which the
HTML scorecard's cards show). The summary and its sentence are :mod:`cfcheck.reporting.evidence`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfcheck.reporting.calibration_section import EvidenceRow
from cfcheck.reporting.evidence import load_evidence, measured_evidence

__all__ = ["bundled_evidence", "domain_evidence", "scorecard_evidence"]


def bundled_evidence(key: str, profiles: Iterable[str] | None = None) -> list[str]:
    """:func:`~cfcheck.reporting.evidence.measured_evidence` of card ``key`` on every registered
    domain the cards were calibrated on (``card_calibrated``), for each profile with a calibration
    file (all profiles unless ``profiles`` is given)."""
    from cfcheck.domains import available_domains, get_domain
    from cfcheck.profiles import PROFILE_NAMES

    sentences = []
    for name in available_domains():
        domain = get_domain(name)
        if getattr(domain, "card_calibrated", False):
            for profile in profiles or PROFILE_NAMES:
                sentences += measured_evidence(domain, key, profile)
    return sentences


@dataclass(frozen=True)
class _CalibrationFolder:
    """A domain known only by its name and calibration folder (a user's, named in a scorecard)."""

    name: str
    calibration_dir: Path


def domain_evidence(name: str, facts: Any, key: str, preferred: str) -> list[EvidenceRow]:
    """The evidence rows of card ``key`` on the domain ``name``: one per summary in its calibration
    files (:func:`~cfcheck.reporting.evidence.load_evidence`), the profile ``preferred`` read first, then
    the other profiles (the first with a summary wins); one error row for an unreadable file (a damaged
    calibration file must not stop the page).

    A registered domain is found by name; a user's domain by the folder of the bars file its facts
    record (``facts["bars_file"]``: a domain keeps its bars and its controls' values in one calibration
    folder); a domain with neither gets no row.

    Args:
        name: the domain's name.
        facts: what the scorecard records of the domain (``profile.domains[name]``).
        key: a metric card's key.
        preferred: the profile read first (the run's).
    """
    from cfcheck.domains.registry import known_domain
    from cfcheck.profiles import PROFILE_NAMES

    domain: Any = known_domain(name)
    if domain is None and isinstance(facts, Mapping) and facts.get("bars_file"):
        domain = _CalibrationFolder(name, Path(str(facts["bars_file"])).parent)
    if domain is None:
        return []
    try:
        found = next(
            (
                evidence
                for profile in (preferred, *(p for p in PROFILE_NAMES if p != preferred))
                if (evidence := load_evidence(domain, key, profile))
            ),
            [],
        )
    except ValueError as error:
        return [EvidenceRow("", None, str(error))]
    return [EvidenceRow(recorded, evidence) for evidence, recorded in found]


def scorecard_evidence(scorecard: Mapping[str, Any], key: str) -> list[tuple[str, str]]:
    """("measured on <domain>", sentence) for each summary of card ``key`` in the calibration files
    of each domain of ``scorecard`` (:func:`domain_evidence`; one per file that holds scores of ``key``,
    one per variant of values per seed), the domains in name order. It looks the domains up: a run
    keeps what its pages show in the scorecard's ``calibration`` section
    (:mod:`cfcheck.reporting.calibration_section`)."""
    summary = scorecard.get("profile") or {}
    preferred = str(summary.get("name") or "quick")
    return [
        (f"measured on {name}", row.text())
        for name, facts in sorted((summary.get("domains") or {}).items())
        for row in domain_evidence(name, facts, key, preferred)
    ]
