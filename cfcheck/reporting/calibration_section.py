"""The scorecard's ``calibration`` section: what the controls reached on the run's scores, written into
the scorecard when the run writes it, so that its pages draw the controls' markers and quote their
measured values on any machine, without the run's domains.

One entry per (kind, domain) of the run's scores, keyed ``"kind/domain"``::

    "calibration": {
      "<kind>/<domain>": {
        "profile": "quick",
        "controls": {"<score identity>": {"+": {"<control>": 0.98}, "-": {"<control>": 0.02}}},
        "evidence": {"<card key>": [{"profile": "quick", "summary": {...}}, {"error": "..."}]}
      }
    }

``controls``: for each of the section's scores, the value each control expected to pass ("+") or to
fail ("-") its suite reached on the same score (the domain's ``calibration-<profile>.json``, written by
``cfcheck calibrate``); the HTML charts draw them as markers. ``evidence``: per metric card of the
section's scores, what the controls measured on the domain (:class:`~cfcheck.reporting.evidence.CardEvidence`,
one per calibration file that holds the card, with the profile the file records; or the error of an
unreadable file); the HTML's metric cards quote them. An entry whose collection failed holds its
``error`` instead. A scorecard written before this section has no ``calibration`` key at all: its
pages say so and draw no markers.

:func:`cfcheck.reporting.calibration_record.collect_calibration` gathers the section from the domains'
calibration folders (at write time, the only place that looks a domain up); :func:`read_calibration`
here reads it back into :class:`SectionCalibration` values for the model
(:class:`cfcheck.reporting.model.Scorecard`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cfcheck.core.keys import ScoreId
from cfcheck.reporting.evidence_summary import CardEvidence, render_evidence

__all__ = [
    "EvidenceRow",
    "Marker",
    "SectionCalibration",
    "read_calibration",
]

#: the signs a marker is drawn for: a control expected to pass (+) or to fail (−) the score's suite
SIGNS = ("+", "-")


def _finite(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


@dataclass(frozen=True)
class Marker:
    """What one control reached on a score, and whether it is expected to pass ("+") or fail ("-")."""

    control: str
    value: float
    expected: str


@dataclass(frozen=True)
class EvidenceRow:
    """What the controls measured on one card, from one calibration file (``summary``, at ``profile``),
    or why that file could not be read (``error``)."""

    profile: str
    summary: CardEvidence | None
    error: str = ""

    def text(self) -> str:
        """The row as the metric card shows it (the sentence of :func:`render_evidence`)."""
        if self.summary is None:
            return f"unreadable calibration values: {self.error}"
        return render_evidence(self.summary, profile=self.profile)

    def to_dict(self) -> dict[str, Any]:
        if self.summary is None:
            return {"error": self.error}
        return {"profile": self.profile, "summary": self.summary.to_dict()}

    @classmethod
    def from_dict(cls, data: Any) -> EvidenceRow:
        if isinstance(data, Mapping) and "summary" in data:
            try:
                return cls(str(data.get("profile") or "?"), CardEvidence.from_dict(data["summary"]))
            except ValueError as error:
                return cls("", None, str(error))
        why = data.get("error") if isinstance(data, Mapping) else None
        return cls("", None, str(why or f"not an evidence row: {data!r}"))


@dataclass(frozen=True)
class SectionCalibration:
    """The calibration entry of one (kind, domain): markers per score identity (each score's controls
    in name order), evidence rows per card key, and the error where the entry could not be collected."""

    profile: str
    markers: Mapping[str, tuple[Marker, ...]] = field(default_factory=dict)
    evidence: Mapping[str, tuple[EvidenceRow, ...]] = field(default_factory=dict)
    error: str = ""

    def markers_of(self, identity: ScoreId | None) -> tuple[Marker, ...]:
        """The markers of the score with ``identity`` (none for a score without one)."""
        return self.markers.get(identity.serialise(), ()) if identity is not None else ()


def markers_of_entry(controls: Any) -> tuple[Marker, ...]:
    """The markers of one score's entry in a calibration file (``{control: {"value", "expected"}}``), in
    control name order; entries without a sign or a finite value are not drawn."""
    if not isinstance(controls, Mapping):
        return ()
    found = []
    for name, entry in sorted(controls.items()):
        if not isinstance(entry, Mapping):
            continue
        value, sign = _finite(entry.get("value")), entry.get("expected", "")
        if sign in SIGNS and value is not None:
            found.append(Marker(str(name), value, str(sign)))
    return tuple(found)


def _section_markers(signed: Any) -> tuple[Marker, ...]:
    """The markers of one score's entry in the section (``{"+": {control: value}, "-": {...}}``)."""
    if not isinstance(signed, Mapping):
        return ()
    found = [
        Marker(str(name), value, sign)
        for sign in SIGNS
        if isinstance(signed.get(sign), Mapping)
        for name, raw in signed[sign].items()
        if (value := _finite(raw)) is not None
    ]
    return tuple(sorted(found, key=lambda marker: marker.control))


def _entry(data: Any) -> SectionCalibration:
    if not isinstance(data, Mapping):
        return SectionCalibration("", error=f"not a calibration entry: {data!r}")
    controls = data.get("controls")
    evidence = data.get("evidence")
    return SectionCalibration(
        profile=str(data.get("profile") or ""),
        markers={str(k): _section_markers(v) for k, v in (controls.items() if isinstance(controls, Mapping) else ())},
        evidence={
            str(key): tuple(EvidenceRow.from_dict(row) for row in rows)
            for key, rows in (evidence.items() if isinstance(evidence, Mapping) else ())
            if isinstance(rows, list)
        },
        error=str(data.get("error") or ""),
    )


def read_calibration(data: Any) -> dict[tuple[str, str], SectionCalibration]:
    """The scorecard's ``calibration`` section as (kind, domain) → :class:`SectionCalibration`; a key
    that is not ``kind/domain`` is skipped, an entry that is no object is kept with its error."""
    if not isinstance(data, Mapping):
        return {}
    found = {}
    for key, entry in data.items():
        kind, slash, domain = str(key).partition("/")
        if slash and kind and domain and "/" not in domain:
            found[kind, domain] = _entry(entry)
    return found
