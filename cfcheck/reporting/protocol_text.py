"""Protocols in words: a scorecard's protocol labels (its Markdown, HTML and badge show them) and what
differs between two scorecards' entries of one protocol (``cfcheck compare`` and baselines say it).

A scorecard's ``protocols`` section maps ``kind/domain/profile`` to an entry written by
:func:`cfcheck.reporting.protocols.scorecard_entry`; a scorecard written before cfcheck recorded
protocols has none, and its scores are of an *unknown* protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cfcheck.core.protocol import SHORT, differing_parts, protocol_key

__all__ = [
    "UNKNOWN",
    "difference_details",
    "entry_of",
    "protocol_label",
    "protocol_labels",
]

#: what a scorecard without a protocol for a score is said to have
UNKNOWN = "unknown protocol (a scorecard written before cfcheck recorded protocols)"
#: how many changed bars, cards or fields a difference names before "… and N more"
LISTED = 6


def protocol_label(entry: Mapping[str, Any]) -> str:
    """``"vce/<domain>/quick v2 (1a2b3c4d5e6f)"``, or ``"… unregistered, 1a2b3c4d5e6f"``."""
    key = protocol_key(str(entry.get("kind")), str(entry.get("domain")), str(entry.get("profile")))
    version = str(entry.get("version") or "unknown")
    digest = str(entry.get("digest") or "")
    if not digest or version.startswith("unregistered"):
        return f"{key} {version}" + (f" ({entry['error']})" if entry.get("error") else "")
    return f"{key} {version} ({digest[:SHORT]})"


def protocol_labels(scorecard: Mapping[str, Any]) -> list[str]:
    """The label of every protocol of ``scorecard``, in name order (empty for an older scorecard)."""
    protocols = scorecard.get("protocols") or {}
    return [protocol_label(protocols[key]) for key in sorted(protocols)]


def entry_of(scorecard: Mapping[str, Any], kind: str, domain: str) -> Mapping[str, Any] | None:
    """The scorecard's protocol entry of ``kind`` on ``domain`` at its profile (None: unknown)."""
    profile = str((scorecard.get("profile") or {}).get("name"))
    found = (scorecard.get("protocols") or {}).get(protocol_key(kind, domain, profile))
    return found if isinstance(found, Mapping) and found.get("digest") else None


def _listed(items: list[str]) -> str:
    shown = items[:LISTED]
    return ", ".join(shown) + (f" … and {len(items) - LISTED} more" if len(items) > LISTED else "")


def _changed(first: Mapping[str, Any], second: Mapping[str, Any]) -> list[str]:
    """``"name: a → b"`` of every name whose value differs ("none" for a missing one)."""
    names = sorted(set(first) | set(second))
    return [
        f"{name}: {first.get(name, 'none')} → {second.get(name, 'none')}"
        for name in names
        if first.get(name) != second.get(name)
    ]


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, Mapping):
        found: dict[str, Any] = {}
        for key, value in data.items():
            found.update(_flat(value, f"{prefix}{key}."))
        return found
    return {prefix.rstrip("."): data}


def _detail(part: str, first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    if part == "tasks":
        changed = _changed(_flat(first.get("tasks") or {}), _flat(second.get("tasks") or {}))
    elif part == "metrics":
        a, b = first.get("metrics") or {}, second.get("metrics") or {}
        changed = [key for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
        return f" (card definitions: {_listed(changed)})" if changed else ""
    elif part == "bars":
        changed = _changed(first.get("bars") or {}, second.get("bars") or {})
        if first.get("bars_source") != second.get("bars_source"):
            changed.insert(0, f"from {first.get('bars_source')} → {second.get('bars_source')}")
    elif part == "reference_models":
        changed = _changed(first.get("reference_models") or {}, second.get("reference_models") or {})
    else:
        changed = []
    return f" ({_listed(changed)})" if changed else ""


def difference_details(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """The parts in which two entries of a protocol differ, each with what changed: ``"bars (d1: >= 78
    → >= 80), metrics (card definitions: d1)"``; "" when their digests agree.

    Args:
        first: the earlier (or first) scorecard's entry.
        second: the later (or second) scorecard's entry.
    """
    if first.get("digest") == second.get("digest"):
        return ""
    parts = differing_parts(first.get("parts") or {}, second.get("parts") or {}) or ["digest"]
    return ", ".join(part + _detail(part, first, second) for part in parts)
