"""A protocol's identity (issue 43): every part that decides a score's number or verdict moves its
digest, and only that part's; the bundled protocols' digests are registered with a readable version
that CHANGELOG.md names; a user's domain is "unregistered"."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import cfcheck.kinds.registry as kind_registry
from cfcheck.calibration.bars import DomainBars
from cfcheck.core.protocol import (
    PARTS,
    ProtocolIdentity,
    VersionRegistry,
    data_digest,
    differing_parts,
    identity_of,
)
from cfcheck.core.thresholds import Bar
from cfcheck.metrics import cards as card_registry
from cfcheck.profiles import resolve_profile
from cfcheck.reporting.protocols import (
    bundled_protocols,
    gather,
    load_registry,
    outdated_versions,
    record_versions,
    run_bars,
    scorecard_entry,
)

ROOT = Path(__file__).resolve().parents[1]
HOW_TO_RECORD = (
    'record a new version of each: `cfcheck protocols --record "<one line: what changed>"` (it updates '
    "cfcheck/reporting/protocol_versions.json and prints the line to add to CHANGELOG.md's top section)"
)


class Store:
    """A model store holding given digests."""

    def __init__(self, digests: dict[str, str]) -> None:
        self.digests = digests

    def names(self) -> list[str]:
        return sorted(self.digests)

    def digest(self, name: str) -> str:
        return self.digests[name]


class Domain:
    """The little of a domain a protocol reads: its name, models, bars' folder and identity."""

    card_calibrated = False
    calibration_dir = None

    def __init__(self, models: dict[str, str] | None = None, identity: object = None) -> None:
        self.name = "mine"
        self.model_store = Store(models or {"cnn": "a" * 64, "oracle": "b" * 64})
        self.identity = identity

    def protocol_identity(self) -> object:
        return self.identity


KIND = next(iter(kind_registry.DECLARATIONS))  # any registered kind will do
BARS = DomainBars({"target_accuracy": Bar(0.8, "min"), "d1": Bar(80.0, "max")}, "calibrated")


def _identity(domain=None, profile=None, seed=0, bars=BARS) -> ProtocolIdentity:
    return gather(KIND, domain or Domain(), profile or resolve_profile("quick"), seed, bars=bars).identity


def _moved(first: ProtocolIdentity, second: ProtocolIdentity) -> list[str]:
    assert first.key == second.key
    return differing_parts(first.parts, second.parts) if first.digest != second.digest else []


def test_the_same_inputs_give_the_same_identity_and_the_key_names_kind_domain_profile():
    first, second = _identity(), _identity()
    assert first == second and first.digest == second.digest and len(first.digest) == 64
    assert first.key == f"{KIND}/mine/quick" and first.short == first.digest[:12]
    assert set(first.parts) == set(PARTS)


@pytest.mark.parametrize(
    ("bars", "why"),
    [
        (DomainBars({"target_accuracy": Bar(0.78, "min"), "d1": Bar(80.0, "max")}, "calibrated"), "a bound"),
        (DomainBars({"target_accuracy": Bar(0.8, "max"), "d1": Bar(80.0, "max")}, "calibrated"), "a direction"),
        (
            DomainBars({"target_accuracy": Bar(0.8, "min"), "d1": Bar(80.0, "max", "times_floor")}, "calibrated"),
            "a rule",
        ),
        (DomainBars({"target_accuracy": Bar(0.8, "min")}, "calibrated"), "a bar dropped"),
        (DomainBars(dict(BARS.bars), "uncalibrated"), "where they come from"),
    ],
)
def test_changing_a_bar_moves_the_bars_part_only(bars, why):
    assert _moved(_identity(), _identity(bars=bars)) == ["bars"], why


@pytest.mark.parametrize(
    "change",
    [{"revision": 2}, {"formula": "something else"}, {"direction": "lower"}, {"units": "nats"}, {"range": (0.0, 2.0)}],
)
def test_changing_a_metric_definition_moves_the_metrics_part_only(monkeypatch, change):
    before = _identity()
    card = card_registry.CARDS["target_accuracy"]
    monkeypatch.setitem(card_registry.CARDS, "target_accuracy", dataclasses.replace(card, **change))
    assert _moved(before, _identity()) == ["metrics"]


def test_the_cards_prose_is_not_part_of_the_identity(monkeypatch):
    before = _identity()
    card = card_registry.CARDS["target_accuracy"]
    monkeypatch.setitem(
        card_registry.CARDS, "target_accuracy", dataclasses.replace(card, notes="reworded", citation="x")
    )
    assert _moved(before, _identity()) == []


def test_changing_a_reference_models_hash_moves_the_models_part_only():
    before = _identity(Domain({"cnn": "a" * 64, "oracle": "b" * 64}))
    after = _identity(Domain({"cnn": "c" * 64, "oracle": "b" * 64}))
    assert _moved(before, after) == ["reference_models"]


def test_changing_the_profiles_sizes_or_the_seeds_moves_the_tasks_part_only():
    quick = resolve_profile("quick")
    sizes = {f.name: getattr(quick.section(KIND), f.name) for f in dataclasses.fields(quick.section(KIND))}
    number = next(name for name, value in sizes.items() if isinstance(value, int) and not isinstance(value, bool))
    resized = resolve_profile("quick", {KIND: {number: sizes[number] + 1}})
    assert _moved(_identity(), _identity(profile=resized)) == ["tasks"]
    assert _moved(_identity(), _identity(seed=1)) == ["tasks"]  # other task seeds
    assert _moved(_identity(), _identity(profile=resolve_profile("quick", {"seeds": 2}))) == ["tasks"]
    assert _moved(_identity(), _identity(profile=resolve_profile("quick", {"bootstrap_resamples": 900}))) == ["tasks"]


def test_a_new_task_revision_of_the_kind_moves_the_tasks_part_only(monkeypatch):
    before = _identity()
    declarations = dict(kind_registry.declarations())
    declarations[KIND] = dataclasses.replace(declarations[KIND], task_revision=2)
    monkeypatch.setattr(kind_registry, "declarations", lambda: declarations)
    assert _moved(before, _identity()) == ["tasks"]


def test_the_domains_own_identity_moves_the_domain_part_only():
    assert _moved(_identity(Domain(identity={"data": 1})), _identity(Domain(identity={"data": 2}))) == ["domain"]
    assert _moved(_identity(Domain(identity=None)), _identity(Domain(identity={"data": 1}))) == ["domain"]


def test_a_users_image_domain_is_identified_by_its_data(tmp_path):
    from cfcheck.domains.data import ArraySource, ImageDomain

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(60, 1, 8, 8), dtype=np.uint8)
    labels = np.repeat(np.arange(3), 20)

    def identity(pixels: np.ndarray) -> object:
        domain = ImageDomain("mine", ArraySource(pixels, labels), root=tmp_path, model_roles={"explained": ("cnn",)})
        return domain.protocol_identity()

    changed = images.copy()
    changed[7, 0, 3, 3] ^= 1
    assert identity(images) == identity(images.copy())
    assert data_digest(identity(images)) != data_digest(identity(changed))


def test_the_run_bars_are_the_ones_the_digest_reads():
    """A domain without a bars file is judged by the user's explicit thresholds only; the cards' bars
    of a bundled domain judge it, and an explicit threshold changes them."""
    profile = resolve_profile("quick")
    assert run_bars(Domain(), profile).bars == {} and run_bars(Domain(), profile).source == "uncalibrated"
    strict = resolve_profile("quick", {"thresholds": {"target_accuracy": 0.99}})
    assert run_bars(Domain(), strict).bars == {"target_accuracy": Bar(0.99, "min")}
    assert _moved(_identity(bars=None), _identity(profile=strict, bars=None)) == ["bars"]


def test_identity_of_refuses_a_missing_or_unknown_part():
    with pytest.raises(ValueError, match="a protocol's parts are"):
        identity_of("k", "d", "p", {"tasks": 1})


def test_a_users_domain_is_unregistered_with_its_short_digest():
    protocol = gather(KIND, Domain(), resolve_profile("quick"), 0, bars=BARS)
    entry = scorecard_entry(protocol, load_registry())
    assert entry["version"] == f"unregistered, {protocol.identity.short}"
    assert entry["digest"] == protocol.identity.digest and entry["parts"] == dict(protocol.identity.parts)
    assert entry["bars"] == {"d1": "<= 80", "target_accuracy": ">= 0.8"}
    assert entry["reference_models"] == {"cnn": "a" * 16, "oracle": "b" * 16}


def test_every_bundled_protocols_digest_is_its_latest_registered_version():
    """Fails when something that defines a bundled protocol changed (a bar, a card's definition, the
    task generation, the sizes, a reference model) without a new readable version."""
    outdated = outdated_versions(load_registry(), bundled_protocols())
    assert not outdated, "protocols changed without a new version:\n" + "\n".join(outdated) + "\n" + HOW_TO_RECORD


def test_changelog_names_every_registered_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    registry = load_registry()
    missing = [
        f"{key} {version.name}"
        for key, versions in registry.versions.items()
        for version in versions
        if not re.search(rf"(?<![\w/]){re.escape(key)} {version.name}(?!\d)", changelog)
    ]
    assert registry.versions and not missing, f"CHANGELOG.md does not name the protocol versions {missing}"


def test_recording_appends_a_version_only_to_the_protocols_that_moved(tmp_path, monkeypatch):
    path = tmp_path / "versions.json"
    first = record_versions("first recorded version", path=path, when="2026-01-01")
    assert first and all(line.endswith(" v1") for line in first)
    assert record_versions("nothing changed", path=path) == []
    registry = VersionRegistry.load(path)
    card = card_registry.CARDS["target_accuracy"]
    monkeypatch.setitem(card_registry.CARDS, "target_accuracy", dataclasses.replace(card, revision=card.revision + 1))
    second = record_versions("target accuracy: a new definition", path=path, when="2026-02-01")
    # a card is part of the protocols of the kinds that declare it only
    declaring = {name for name, d in kind_registry.DECLARATIONS.items() if "target_accuracy" in d.card_keys()}
    moved = [line.removesuffix(" v1") for line in first if line.split("/")[0] in declaring]
    assert declaring and moved and sorted(second) == sorted(f"{key} v2" for key in moved)
    key = moved[0]
    latest = VersionRegistry.load(path).latest(key)
    assert latest is not None and latest.change == "target accuracy: a new definition" and latest.date == "2026-02-01"
    assert differing_parts(registry.latest(key).parts, latest.parts) == ["metrics"]
    assert outdated_versions(VersionRegistry.load(path), bundled_protocols()) == []


def _kind_of_card(card: str) -> str:
    (kind,) = [name for name, d in kind_registry.DECLARATIONS.items() if card in d.card_keys()]
    return kind


def test_a_cards_revision_moves_the_protocols_of_its_kind_only(monkeypatch):
    """Issue 43's over-strictness undone: a protocol covers only its kind's declared cards."""
    card = card_registry.CARDS["composition_l1"]
    kind = _kind_of_card("composition_l1")  # the SCM kind's
    before = {p.identity.key: p.identity for p in bundled_protocols()}
    monkeypatch.setitem(card_registry.CARDS, "composition_l1", dataclasses.replace(card, revision=card.revision + 1))
    after = {p.identity.key: p.identity for p in bundled_protocols()}
    assert before.keys() == after.keys()
    moved = {key for key in before if before[key].digest != after[key].digest}
    assert moved == {key for key in before if key.startswith(f"{kind}/")} and moved
    assert {key.split("/")[0] for key in before if key not in moved} == set(kind_registry.DECLARATIONS) - {kind}
    assert all(_moved(before[key], after[key]) == ["metrics"] for key in moved)


def test_a_bar_moves_the_protocols_of_the_kinds_that_declare_its_card_only():
    kind = _kind_of_card("composition_l1")
    others = [name for name in kind_registry.DECLARATIONS if name != kind]
    bars = {"composition_l1": Bar(0.1, "max"), "target_accuracy": Bar(0.8, "min")}
    moved = DomainBars({**bars, "composition_l1:variant": Bar(0.2, "max")}, "calibrated")
    for name in kind_registry.DECLARATIONS:
        first = gather(name, Domain(), resolve_profile("quick"), 0, bars=DomainBars(bars, "calibrated")).identity
        second = gather(name, Domain(), resolve_profile("quick"), 0, bars=moved).identity
        assert _moved(first, second) == (["bars"] if name == kind else []), name
    scm = gather(kind, Domain(), resolve_profile("quick"), 0, bars=moved)
    assert set(scm.data["bars"]["bars"]) == {"composition_l1", "composition_l1:variant"}
    assert set(scm.data["metrics"]) == set(kind_registry.DECLARATIONS[kind].card_keys()) and others


def test_a_malformed_registry_names_the_file(tmp_path):
    path = tmp_path / "versions.json"
    path.write_text(
        '{"format": 1, "protocols": {"k/d/p": [{"version": 2, "digest": "x", "date": "d", "change": "c"}]}}'
    )
    with pytest.raises(ValueError, match=r"versions.json: the versions of 'k/d/p' must be numbered 1, 2"):
        VersionRegistry.load(path)


def test_every_kind_and_card_declares_a_revision():
    assert all(d.task_revision >= 1 for d in kind_registry.DECLARATIONS.values())
    assert all(card.revision >= 1 for card in card_registry.CARDS.values())
    with pytest.raises(ValueError, match="revision"):
        dataclasses.replace(card_registry.CARDS["target_accuracy"], revision=0)
