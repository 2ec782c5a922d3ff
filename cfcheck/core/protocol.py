"""Protocol identity: which scores can be compared with which.

Every score belongs to a protocol, named by its kind, domain and profile (``kind/domain/profile``).
Its identity is a digest of everything that decides the score's number and verdict, in five
parts (:data:`PARTS`):

- ``tasks``: how the kind builds its tasks (its declared task revision), the task seeds and the
  profile's sizes for that kind;
- ``metrics``: the definition of each metric card the kind declares (its hand-bumped ``revision``
  and the fields that define the number: formula, direction, range, units, normalisation,
  abstentions, interval);
- ``bars``: the bars of those cards that judge the domain's scores at the profile, where they come
  from (the cards, the domain's calibrated bars file) and the user's explicit thresholds;
- ``reference_models``: the sha256 of each of the domain's reference models;
- ``domain``: the domain's own identity, where it declares one.

This module is pure: it digests the parts' data (gathered by :mod:`cfcheck.reporting.protocols`)
and keeps the registry of readable versions (:class:`VersionRegistry`): for each bundled protocol,
the ordered list of its versions, each with its digest, date and one line saying what changed. A
protocol whose digest is not registered (a user's domain, or settings of the user's own) is
``"unregistered, <short digest>"``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "PARTS",
    "SHORT",
    "ProtocolIdentity",
    "RegisteredVersion",
    "VersionRegistry",
    "data_digest",
    "differing_parts",
    "identity_of",
    "protocol_key",
    "unregistered",
]

#: what a protocol's identity is made of, in the order messages list them
PARTS = ("tasks", "metrics", "bars", "reference_models", "domain")
#: how many hex digits of a digest are shown
SHORT = 12
#: the registry file's format
REGISTRY_FORMAT = 1


def data_digest(data: Any) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys, no spaces; tuples as lists).

    Args:
        data: JSON-ready data (floats keep their ``repr``; infinities are written as JSON's ``Infinity``).

    Returns:
        The hex digest.
    """
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def protocol_key(kind: str, domain: str, profile: str) -> str:
    """``kind/domain/profile``: a protocol's name in scorecards and in the registry."""
    return f"{kind}/{domain}/{profile}"


def unregistered(digest: str) -> str:
    """The readable version of a protocol the registry does not hold."""
    return f"unregistered, {digest[:SHORT]}"


@dataclass(frozen=True)
class ProtocolIdentity:
    """A protocol and the digests of its parts.

    Attributes:
        kind: the method kind.
        domain: the domain's name.
        profile: the profile's name.
        parts: part (:data:`PARTS`) → the sha256 of its data.
    """

    kind: str
    domain: str
    profile: str
    parts: Mapping[str, str]

    def __post_init__(self) -> None:
        if set(self.parts) != set(PARTS):
            raise ValueError(f"a protocol's parts are {list(PARTS)}; got {sorted(self.parts)}")

    @property
    def key(self) -> str:
        return protocol_key(self.kind, self.domain, self.profile)

    @property
    def digest(self) -> str:
        """sha256 of the protocol's name and its parts' digests."""
        return data_digest({"protocol": self.key, "parts": dict(self.parts)})

    @property
    def short(self) -> str:
        return self.digest[:SHORT]


def identity_of(kind: str, domain: str, profile: str, data: Mapping[str, Any]) -> ProtocolIdentity:
    """The identity of a protocol from its parts' data.

    Args:
        kind: the method kind.
        domain: the domain's name.
        profile: the profile's name.
        data: part (every one of :data:`PARTS`) → its JSON-ready data.

    Returns:
        The :class:`ProtocolIdentity`.

    Raises:
        ValueError: a part is missing or unknown.
    """
    return ProtocolIdentity(kind, domain, profile, {part: data_digest(value) for part, value in data.items()})


def differing_parts(first: Mapping[str, str], second: Mapping[str, str]) -> list[str]:
    """The parts whose digests differ (a part one side lacks differs), in :data:`PARTS` order."""
    known = [*PARTS, *sorted((set(first) | set(second)) - set(PARTS))]
    return [part for part in known if (part in first or part in second) and first.get(part) != second.get(part)]


@dataclass(frozen=True)
class RegisteredVersion:
    """One version of a bundled protocol.

    Attributes:
        number: 1, 2, … in the order they were recorded.
        digest: the protocol's sha256.
        date: when it was recorded (ISO date).
        change: one line saying what changed (the first: what it is).
        parts: part → its sha256 (so a new digest can say which parts moved).
    """

    number: int
    digest: str
    date: str
    change: str
    parts: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``v3``."""
        return f"v{self.number}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.number,
            "digest": self.digest,
            "date": self.date,
            "change": self.change,
            "parts": dict(self.parts),
        }


class VersionRegistry:
    """The readable versions of the bundled protocols: protocol → its versions, oldest first.

    The file is JSON: ``{"format": 1, "protocols": {"kind/domain/profile": [{"version": 1,
    "digest": ..., "date": ..., "change": ..., "parts": {...}}, ...]}}``.
    """

    def __init__(self, versions: Mapping[str, list[RegisteredVersion]] | None = None) -> None:
        self.versions: dict[str, list[RegisteredVersion]] = {k: list(v) for k, v in (versions or {}).items()}

    @classmethod
    def load(cls, path: Path) -> VersionRegistry:
        """The registry in ``path`` (an empty one where there is no file).

        Raises:
            ValueError: naming the file and the entry when it is malformed.
        """
        path = Path(path)
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"{path}: not a readable protocol registry: {error}") from error
        if (
            not isinstance(data, dict)
            or data.get("format") != REGISTRY_FORMAT
            or not isinstance(data.get("protocols"), dict)
        ):
            raise ValueError(f"{path}: expected {{'format': {REGISTRY_FORMAT}, 'protocols': {{name: [versions]}}}}")
        versions: dict[str, list[RegisteredVersion]] = {}
        for key, entries in data["protocols"].items():
            try:
                versions[key] = [
                    RegisteredVersion(
                        int(e["version"]), str(e["digest"]), str(e["date"]), str(e["change"]), dict(e.get("parts", {}))
                    )
                    for e in entries
                ]
            except (KeyError, TypeError, ValueError) as error:
                raise ValueError(f"{path}: the versions of {key!r} are malformed ({error})") from error
            numbers = [v.number for v in versions[key]]
            if numbers != list(range(1, len(numbers) + 1)):
                raise ValueError(f"{path}: the versions of {key!r} must be numbered 1, 2, … in order; got {numbers}")
        return cls(versions)

    def to_json(self) -> str:
        protocols = {key: [v.to_dict() for v in entries] for key, entries in sorted(self.versions.items())}
        return json.dumps({"format": REGISTRY_FORMAT, "protocols": protocols}, indent=1, sort_keys=True) + "\n"

    def latest(self, key: str) -> RegisteredVersion | None:
        """The last version recorded for ``key`` (None: never registered)."""
        entries = self.versions.get(key)
        return entries[-1] if entries else None

    def find(self, key: str, digest: str) -> RegisteredVersion | None:
        """The version of ``key`` with ``digest``, if one was registered."""
        return next((v for v in reversed(self.versions.get(key, [])) if v.digest == digest), None)

    def readable(self, key: str, digest: str) -> str:
        """``"v3"`` where ``digest`` is a registered version of ``key``, else ``"unregistered, <short>"``."""
        found = self.find(key, digest)
        return found.name if found is not None else unregistered(digest)

    def record(self, identity: ProtocolIdentity, change: str, date: str) -> RegisteredVersion:
        """Append a new version of ``identity``'s protocol (its digest must be new for it).

        Args:
            identity: the protocol as it is now.
            change: one line saying what changed.
            date: ISO date of the change.

        Returns:
            The new version.

        Raises:
            ValueError: the line is empty, or the digest is already the protocol's latest version.
        """
        if not change.strip():
            raise ValueError("say in one line what changed")
        latest = self.latest(identity.key)
        if latest is not None and latest.digest == identity.digest:
            raise ValueError(f"{identity.key}: its digest {identity.short} is already {latest.name}")
        version = RegisteredVersion(
            (latest.number if latest else 0) + 1, identity.digest, date, " ".join(change.split()), dict(identity.parts)
        )
        self.versions.setdefault(identity.key, []).append(version)
        return version
