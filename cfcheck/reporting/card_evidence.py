"""Where the metric cards are shown, what the controls measured beside them: on every bundled
domain (``cfcheck cards``) and on every domain a scorecard names (the HTML scorecard's cards).
The summary and its sentence are :mod:`cfcheck.reporting.evidence`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfcheck.reporting.evidence import load_evidence, measured_evidence, render_evidence

__all__ = ["bundled_evidence", "scorecard_evidence"]


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


def scorecard_evidence(scorecard: Mapping[str, Any], key: str) -> list[tuple[str, str]]:
    """("measured on <domain>", sentence) for each summary of card ``key`` in the calibration files
    of each domain of ``scorecard`` (one per file that holds scores of ``key``, one per variant of
    values per seed).

    A registered domain is found by name; a user's domain by the folder of the bars file its facts
    record (``profile.domains[name].bars_file``: a domain keeps its bars and its controls' values in
    one calibration folder); a domain with neither gets no row. The scorecard's own profile is read
    first, then the other profiles. An unreadable file gives a row that says so: a damaged
    calibration file must not stop the page.
    """
    from cfcheck.domains.registry import known_domain
    from cfcheck.profiles import PROFILE_NAMES

    summary = scorecard.get("profile") or {}
    preferred = str(summary.get("name") or "quick")
    rows = []
    for name, facts in sorted((summary.get("domains") or {}).items()):
        domain: Any = known_domain(name)
        if domain is None and isinstance(facts, Mapping) and facts.get("bars_file"):
            domain = _CalibrationFolder(name, Path(str(facts["bars_file"])).parent)
        if domain is None:
            continue
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
            rows.append((f"measured on {name}", f"unreadable calibration values: {error}"))
            continue
        rows += [(f"measured on {name}", render_evidence(evidence, profile=recorded)) for evidence, recorded in found]
    return rows
