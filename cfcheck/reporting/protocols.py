"""Each score's protocol, gathered from what defines it, and the registry of the bundled ones' versions.

:mod:`cfcheck.core.protocol` digests a protocol's five parts; this module gathers their data for a
(kind, domain, profile) from the engine: the kind's declared ``task_revision``, the task seeds and
the profile's sizes for the kind (``tasks``), the definitions of the metric cards the kind declares
(``metrics``: :meth:`~cfcheck.kinds.declaration.KindDeclaration.card_keys`, the only cards its
scores may have), the bars of those cards that judge the domain's scores at the profile (``bars``:
the cards' and the domain's calibrated bars file, with the user's explicit thresholds), the domain's
reference models' sha256 (``reference_models``) and the domain's own ``protocol_identity()`` where it
has one (``domain``). A change to one kind's card or bar moves that kind's protocols only.

The readable versions of the bundled protocols are kept in ``protocol_versions.json`` beside this
module (:data:`REGISTRY_FILE`); ``cfcheck protocols --record "what changed"``
(:func:`record_versions`) appends a version to every bundled protocol whose digest moved, and
``tests/test_protocol_identity.py`` fails until that is done and CHANGELOG.md names the new versions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from cfcheck.core.protocol import (
    PARTS,
    SHORT,
    ProtocolIdentity,
    VersionRegistry,
    data_digest,
    differing_parts,
    identity_of,
)

__all__ = [
    "REGISTRY_FILE",
    "Protocol",
    "bundled_protocols",
    "card_definition",
    "domain_protocols",
    "gather",
    "kind_metric_cards",
    "load_registry",
    "outdated_versions",
    "record_versions",
    "run_bars",
    "scorecard_entry",
    "scorecard_protocols",
]

#: the registry of the bundled protocols' readable versions
REGISTRY_FILE = Path(__file__).with_name("protocol_versions.json")
#: the card fields that define a metric's number (the rest is prose)
DEFINING_FIELDS = ("formula", "direction", "units", "normalisation", "abstentions", "per_sample", "interval")


@dataclass(frozen=True)
class Protocol:
    """A protocol's identity and the data of its parts (:data:`cfcheck.core.protocol.PARTS`)."""

    identity: ProtocolIdentity
    data: Mapping[str, Any]


def card_definition(card: Any) -> dict[str, Any]:
    """What defines a card's number: its ``revision``, range and :data:`DEFINING_FIELDS`."""
    low, high = card.range
    return {"revision": card.revision, "range": [low, high], **{name: getattr(card, name) for name in DEFINING_FIELDS}}


def metric_definitions(cards: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Card key → :func:`card_definition`, of ``cards`` (default every registered card)."""
    if cards is None:
        from cfcheck.kinds.registry import loaded_cards

        cards = loaded_cards()
    return {key: card_definition(card) for key, card in sorted(cards.items())}


def kind_metric_cards(kind: str) -> dict[str, Any]:
    """Card key → the registered card, of every card ``kind`` declares (its protocol's ``metrics``)."""
    from cfcheck.kinds import MethodKind
    from cfcheck.kinds.registry import loaded_cards

    cards = loaded_cards()
    return {key: cards[key] for key in MethodKind(kind).declaration.card_keys()}


def tasks_part(kind: str, profile: Any, seed: int) -> dict[str, Any]:
    """The kind's task revision, the run's task seeds and the profile's sizes for the kind."""
    from cfcheck.kinds import MethodKind

    return {
        "revision": MethodKind(kind).declaration.task_revision,
        "seeds": list(profile.task_seeds(seed)),
        "bootstrap_resamples": profile.bootstrap_resamples,
        "determinism_batch": profile.determinism_batch,
        "sizes": dataclasses.asdict(profile.section(kind)),
    }


def bars_part(bars: Any, cards: Iterable[str] | None = None) -> dict[str, Any]:
    """Where the bars come from and each bar (kind, bound, relative rule) of a
    :class:`cfcheck.calibration.bars.DomainBars`, of the cards ``cards`` only (a bar of ``card`` or of
    ``card:variant``; None: every bar)."""
    from cfcheck.metrics.key import MetricKey

    kept = None if cards is None else set(cards)
    return {
        "source": bars.source,
        "bars": {
            key: [bar.kind, bar.bound, bar.relative]
            for key, bar in sorted(bars.bars.items())
            if kept is None or MetricKey.card_part(key) in kept
        },
    }


def models_part(domain: Any) -> dict[str, str]:
    """Model name → sha256, of every model in the domain's store."""
    store = domain.model_store
    return {name: store.digest(name) for name in store.names()}


def domain_part(domain: Any) -> Any:
    """The domain's ``protocol_identity()`` (None where it declares none)."""
    hook = getattr(domain, "protocol_identity", None)
    return hook() if callable(hook) else None


def run_bars(domain: Any, profile: Any) -> Any:
    """The bars that judge ``domain``'s scores at ``profile``: the cards' (with the domain's bars file)
    on a card-calibrated domain, else the domain's own; the user's explicit thresholds on top
    (:func:`cfcheck.calibration.bars.domain_bars`)."""
    from cfcheck.calibration.bars import domain_bars
    from cfcheck.kinds.registry import loaded_cards
    from cfcheck.profiles import default_thresholds

    defaults = default_thresholds(profile.name)
    explicit = {key: bar for key, bar in profile.thresholds.items() if defaults.get(key) != bar}
    return domain_bars(domain, profile, explicit, cards=loaded_cards())


def gather(kind: str, domain: Any, profile: Any, seed: int, *, bars: Any = None) -> Protocol:
    """The protocol of ``kind``'s scores on ``domain`` at ``profile``.

    Args:
        kind: the method kind.
        domain: the domain object.
        profile: the run's :class:`cfcheck.profiles.Profile` (with the user's settings).
        seed: the run's base seed (``--cfcheck-seed``).
        bars: the run's bars of the domain (a ``DomainBars``); None: :func:`run_bars`.

    Returns:
        The :class:`Protocol`.
    """
    cards = kind_metric_cards(kind)
    data = {
        "tasks": tasks_part(kind, profile, seed),
        "metrics": metric_definitions(cards),
        "bars": bars_part(bars if bars is not None else run_bars(domain, profile), cards),
        "reference_models": models_part(domain),
        "domain": domain_part(domain),
    }
    return Protocol(identity_of(kind, domain.name, profile.name, data), data)


def load_registry(path: Path | None = None) -> VersionRegistry:
    """The registry of the bundled protocols' versions (:data:`REGISTRY_FILE`)."""
    return VersionRegistry.load(path or REGISTRY_FILE)


def scorecard_entry(protocol: Protocol, registry: VersionRegistry) -> dict[str, Any]:
    """A protocol as the scorecard records it: its readable version, digest and parts' digests, and
    what lets a later reader say what changed (the task facts, each card's digest, each bar, each
    model's digest, the domain's identity)."""
    from cfcheck.core.thresholds import Bar

    identity, data = protocol.identity, protocol.data
    return {
        "kind": identity.kind,
        "domain": identity.domain,
        "profile": identity.profile,
        "version": registry.readable(identity.key, identity.digest),
        "digest": identity.digest,
        "parts": dict(identity.parts),
        "tasks": data["tasks"],
        "metrics": {key: data_digest(definition)[:SHORT] for key, definition in data["metrics"].items()},
        "bars_source": data["bars"]["source"],
        "bars": {
            key: Bar(bound, kind, relative).describe() for key, (kind, bound, relative) in data["bars"]["bars"].items()
        },
        "reference_models": {name: digest[:16] for name, digest in data["reference_models"].items()},
        "domain_identity": data["domain"],
    }


def scorecard_protocols(
    pairs: Iterable[tuple[str, str]],
    profile: Any,
    seed: int,
    domain_of: Callable[[str], Any],
    bars_of: Callable[[str], Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """The scorecard's ``protocols`` section: one entry (:func:`scorecard_entry`) per (kind, domain)
    of the run's scores; a protocol that cannot be gathered (a broken model store) is recorded with
    its ``error`` and version ``"unknown"``, never stopping the write. Scores without a kind or a
    domain ("-") have none.

    Args:
        pairs: the (kind, domain name) pairs of the run's scores.
        profile: the run's profile.
        seed: the run's base seed.
        domain_of: domain name → the domain object.
        bars_of: domain name → its bars in the run (None: :func:`run_bars`).
    """
    from cfcheck.core.protocol import protocol_key
    from cfcheck.kinds.registry import DECLARATIONS

    registry = load_registry()
    found: dict[str, dict[str, Any]] = {}
    for kind, name in sorted(set(pairs)):
        if kind not in DECLARATIONS or name == "-":
            continue
        key = protocol_key(kind, name, profile.name)
        try:
            bars = bars_of(name) if bars_of is not None else None
            found[key] = scorecard_entry(gather(kind, domain_of(name), profile, seed, bars=bars), registry)
        except Exception as error:  # noqa: BLE001 - the scorecard is written anyway, saying why
            found[key] = {
                "kind": kind,
                "domain": name,
                "profile": profile.name,
                "version": "unknown",
                "error": str(error),
            }
    return found


def _protocols_of(domains: Iterable[Any], profiles: Iterable[Any], seed: int) -> Iterator[Protocol]:
    from cfcheck.kinds import kind_spec
    from cfcheck.kinds.registry import DECLARATIONS

    profiles = list(profiles)
    for domain in domains:
        for kind in DECLARATIONS:
            if kind_spec(kind).supports(domain) is None:
                yield from (gather(kind, domain, profile, seed) for profile in profiles)


def _profiles(settings: Mapping[str, Any] | None) -> list[Any]:
    from cfcheck.profiles import PROFILE_NAMES, resolve_profile

    return [resolve_profile(name, settings or {}) for name in PROFILE_NAMES]


def bundled_protocols(settings: Mapping[str, Any] | None = None, seed: int = 0) -> list[Protocol]:
    """Every protocol of the bundled domains: each kind with suites on a bundled domain, at every
    profile (with ``settings``, a ``[tool.cfcheck]`` table; None: the built-in profiles, as the
    registry records them), in the order domains and kinds are registered."""
    from cfcheck.domains import available_domains, get_domain
    from cfcheck.domains.base import BundledDomain

    domains = [d for d in (get_domain(name) for name in available_domains()) if isinstance(d, BundledDomain)]
    return list(_protocols_of(domains, _profiles(settings), seed))


def domain_protocols(domain: Any, settings: Mapping[str, Any] | None = None, seed: int = 0) -> list[Protocol]:
    """The protocols of one domain (a user's, say): each kind with suites on it, at every profile."""
    return list(_protocols_of([domain], _profiles(settings), seed))


def outdated_versions(registry: VersionRegistry, protocols: Iterable[Protocol]) -> list[str]:
    """One line per protocol whose digest is not its latest registered version, naming the parts
    that moved since that version."""
    lines = []
    for protocol in protocols:
        identity = protocol.identity
        latest = registry.latest(identity.key)
        if latest is None:
            lines.append(f"{identity.key}: not registered (digest {identity.short})")
        elif latest.digest != identity.digest:
            moved = differing_parts(latest.parts, identity.parts) if latest.parts else list(PARTS)
            lines.append(
                f"{identity.key}: digest {identity.short} is not its latest version {latest.name} "
                f"({latest.digest[:SHORT]}); changed: {', '.join(moved)}"
            )
    return lines


def record_versions(change: str, *, path: Path | None = None, when: str | None = None) -> list[str]:
    """Record a new version of every bundled protocol whose digest is not its latest registered one
    (the built-in profiles, seed 0), in the registry file.

    Args:
        change: one line saying what changed (the same for every protocol recorded).
        path: the registry file (default :data:`REGISTRY_FILE`, in the source tree of a checkout).
        when: the ISO date to record (default today).

    Returns:
        ``"kind/domain/profile vN"`` of each version recorded (empty: every digest was registered).
    """
    from cfcheck.core.io import atomic_write_text

    target = path or REGISTRY_FILE
    registry = VersionRegistry.load(target)
    recorded = []
    for protocol in bundled_protocols():
        latest = registry.latest(protocol.identity.key)
        if latest is None or latest.digest != protocol.identity.digest:
            version = registry.record(protocol.identity, change, when or date.today().isoformat())
            recorded.append(f"{protocol.identity.key} {version.name}")
    if recorded:
        atomic_write_text(target, registry.to_json())
    return recorded
