"""A kind declares the metric cards its suites record (issue 41's kind-specific cards; issue 43's
per-kind protocols): the declarations match what the bundled kinds' runs record, a score of an
undeclared card is refused, a declared key without a card is refused when the kinds load, and a
kind of another package adds cards of its own (a key clash names both owners).

What the bundled kinds record is read, without running a suite, as ``tests/metrics/test_card_coverage.py``
reads it: the published scorecards (each score's ``kind`` and ``metric``), the bundled domains'
calibration values (each identity's kind) and bars files (each bar's ``method_kind``), the literal keys
recorded in ``suites/<kind>/`` and ``cfcheck/kinds/<kind>/``, and the cards that collection cannot reach
(:data:`~tests.metrics.test_card_coverage.SCORED_ELSEWHERE`, by the kind folder that records them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import cfcheck.metrics.cards as card_registry
from cfcheck.calibration.bars import DomainBars
from cfcheck.core.keys import ScoreId
from cfcheck.core.thresholds import Bar
from cfcheck.kinds.declaration import KindDeclaration, KindError
from cfcheck.kinds.registry import DECLARATIONS, kind_cards, register_kind_cards
from cfcheck.metrics.key import MetricKey
from cfcheck.scoring import ScoreRecorder
from tests.metrics.test_card_coverage import SCORED_ELSEWHERE, source_keys
from tests.toy_cards import toy_card as _card

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ROOT / "cfcheck" / "domains"
BUNDLED = ("vce", "scm", "latent", "attribution")
PARTS = dict(spec="pkg.spec:SPEC", section="pkg.section:SECTION", template="pkg.template:ADAPTER", suites="pkg.suites")

#: (kind, metric key, where it was recorded)
Recorded = tuple[str, str, str]


def _published() -> Iterator[Recorded]:
    for path in sorted((ROOT / "reports" / "published").glob("*/scorecard.json")):
        for score in json.loads(path.read_text(encoding="utf-8"))["scores"]:
            if score.get("kind") in DECLARATIONS:
                yield str(score["kind"]), str(score["metric"]), str(path.relative_to(ROOT))


def _calibration_files() -> Iterator[Recorded]:
    for path in sorted(DOMAINS.glob("*/calibration-*.json")):
        data, where = json.loads(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT))
        if path.name.startswith("calibration-attribution-"):
            for section in ("values", "without_bar"):
                for key in data.get(section, {}):
                    yield "attribution", str(MetricKey.read(key, card_registry.CARDS)), where
        else:
            for identity in data["values"]:
                score = ScoreId.parse(identity)
                yield str(score.kind), str(score.metric), where
    for path in sorted(DOMAINS.glob("*/bars-*.json")):
        for key, entry in json.loads(path.read_text(encoding="utf-8"))["bars"].items():
            if entry.get("method_kind") in DECLARATIONS:
                yield entry["method_kind"], str(MetricKey.read(key, card_registry.CARDS)), str(path.relative_to(ROOT))


def _sources() -> Iterator[Recorded]:
    for kind in BUNDLED:
        folders = (DECLARATIONS[kind].suite_folder(), ROOT / "cfcheck" / "kinds" / kind)
        for key, where in source_keys(folders).items():
            yield kind, key, where
        for card, (path, _) in SCORED_ELSEWHERE.items():
            if any((ROOT / path).resolve().is_relative_to(folder) for folder in folders):
                yield kind, card, path


def recorded() -> list[Recorded]:
    """Everything the bundled kinds are found to record."""
    return [*_published(), *_calibration_files(), *_sources()]


def undeclared(found: Iterable[Recorded]) -> dict[tuple[str, str], str]:
    """(kind, card) → where, for each key recorded by a kind whose declaration omits its card."""
    missing: dict[tuple[str, str], str] = {}
    for kind, key, where in found:
        card = MetricKey.parse(key).card
        declared = kind_cards(kind)
        if declared is not None and card not in declared:
            missing.setdefault((kind, card), where)
    return missing


def test_every_card_a_bundled_kind_records_is_one_it_declares():
    found = recorded()
    kinds = {kind for kind, _, _ in found}
    assert kinds == set(BUNDLED), f"the collection found no record of some kinds: {set(BUNDLED) - kinds}"
    assert len(found) > 1000, "the collection found almost nothing: has the layout of the files changed?"
    assert undeclared(found) == {}


def test_every_card_a_bundled_kind_declares_is_one_it_records():
    """A card declared but never recorded would only make the kind's protocols move for nothing."""
    by_kind: dict[str, set[str]] = {kind: set() for kind in BUNDLED}
    for kind, key, _ in recorded():
        by_kind[kind].add(MetricKey.parse(key).card)
    unused = {kind: sorted(set(DECLARATIONS[kind].card_keys()) - cards) for kind, cards in by_kind.items()}
    assert unused == {kind: [] for kind in BUNDLED}


def test_the_per_kind_card_counts():
    """What the declarations say (checked against the runs above): shared cards are declared by each kind."""
    counts = {kind: len(DECLARATIONS[kind].card_keys()) for kind in BUNDLED}
    assert counts == {"vce": 34, "scm": 20, "latent": 7, "attribution": 12}
    every = set().union(*(DECLARATIONS[kind].card_keys() for kind in BUNDLED))
    assert every == set(card_registry.CARDS)  # no bundled card is left without a kind


def test_the_check_can_fail():
    planted = [("latent", "d1", "planted.json"), ("vce", "lvs_target:digit", "ok"), ("-", "domain", "ok")]
    assert undeclared(planted) == {("latent", "d1"): "planted.json"}


# -- the declaration and the registry ------------------------------------------------------------


def _declaration(**fields) -> KindDeclaration:
    return KindDeclaration(name="toy", description="toy", call="rate", arguments=("x",), **PARTS, **fields)


def test_a_declared_key_without_a_card_is_refused_naming_the_kind_and_the_closest_card():
    with pytest.raises(KindError, match=r"kind 'toy' declares the metric card 'target_acuracy', which no card "):
        register_kind_cards([_declaration(cards=("coverage", "target_acuracy"))])
    with pytest.raises(KindError, match=r"; did you mean 'target_accuracy'"):
        register_kind_cards([_declaration(cards=("target_acuracy",))])
    with pytest.raises(KindError, match="cfcheck cards` lists the known cards"):
        register_kind_cards([_declaration(cards=("zzzz",))])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cards": "coverage"}, "cards must be a tuple of metric card keys"),
        ({"cards": ("coverage", 3)}, "cards must be a tuple of metric card keys"),
        ({"own_cards": ("coverage",)}, "own_cards must hold MetricCard objects"),
        ({"own_cards": "toykind.cards"}, "own_cards is 'toykind.cards'; expected 'package.module:attribute'"),
    ],
)
def test_a_declaration_refuses_cards_of_the_wrong_shape(fields, message):
    with pytest.raises(KindError, match=message):
        _declaration(**fields)


def test_a_kinds_own_cards_are_registered_and_count_as_declared(registry_restored):
    toy = _card("toy_rate", bar=Bar(0.5, "min"), rationale="by construction")
    declaration = _declaration(cards=("coverage",), own_cards=(toy,))
    assert "toy_rate" not in card_registry.CARDS
    register_kind_cards([declaration])
    assert card_registry.CARDS["toy_rate"] is toy and card_registry.card_owner("toy_rate") == "kind 'toy'"
    assert declaration.card_keys() == ("coverage", "toy_rate")
    assert card_registry.card_of("toy_rate:variant") is toy
    register_kind_cards([declaration])  # loading the kinds again is no clash with itself
    from cfcheck.profiles import default_thresholds

    assert default_thresholds("quick")["toy_rate"] == Bar(0.5, "min")  # its bar judges its scores


def test_own_cards_may_be_a_reference_resolved_when_the_kinds_load(registry_restored, tmp_path, monkeypatch):
    (tmp_path / "toy_cards_module.py").write_text(
        "from cfcheck.metrics.card import MetricCard\n"
        "CARDS = (MetricCard(key='toy_spread', name='Toy spread', formula='std of ratings', direction='none', "
        "range=(0.0, 1.0), units='rating', normalisation='none', abstentions='left out', citation='a test', "
        "per_sample=True),)\nNOT_CARDS = ('toy_spread',)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    declaration = _declaration(own_cards="toy_cards_module:CARDS")
    register_kind_cards([declaration])
    assert declaration.card_keys() == ("toy_spread",) and card_registry.CARDS["toy_spread"].direction == "none"
    with pytest.raises(KindError, match=r"kind 'toy' \(own_cards\) names 'toy_cards_module:MISSING'"):
        register_kind_cards([_declaration(own_cards="toy_cards_module:MISSING")])
    with pytest.raises(KindError, match=r"own_cards \(toy_cards_module:NOT_CARDS\) must hold MetricCard objects"):
        register_kind_cards([_declaration(own_cards="toy_cards_module:NOT_CARDS")])


def test_a_key_clash_names_both_owners_and_registers_nothing(registry_restored):
    clash = _card("coverage")
    with pytest.raises(
        KindError, match=r"kind 'toy''s metric card 'coverage' clashes with the card 'coverage' that cfcheck"
    ):
        register_kind_cards([_declaration(own_cards=(_card("toy_new"), clash))])
    assert "toy_new" not in card_registry.CARDS and card_registry.CARDS["coverage"] is not clash
    register_kind_cards([_declaration(own_cards=(_card("toy_new"),))])
    other = dataclasses.replace(_declaration(own_cards=(_card("toy_new"),)), name="other")
    with pytest.raises(
        KindError, match=r"kind 'other''s metric card 'toy_new' clashes with .* that kind 'toy' defines"
    ):
        register_kind_cards([other])
    with pytest.raises(KindError, match="defines the metric card 'toy_twice' twice"):
        register_kind_cards([_declaration(own_cards=(_card("toy_twice"), _card("toy_twice")))])


# -- a run records only its kind's cards ---------------------------------------------------------


def _recorder(kind: str | None) -> tuple[ScoreRecorder, list]:
    records: list = []
    session = SimpleNamespace(
        profile=SimpleNamespace(bootstrap_resamples=50, inconclusive="fail", tolerances={}),
        seed=0,
        baseline=None,
        add_record=records.append,
        bars_for=lambda domain: DomainBars({}, "uncalibrated"),
    )
    marker = SimpleNamespace(args=(kind,)) if kind is not None else None
    node = SimpleNamespace(
        nodeid="suite::test",
        module=None,
        path=Path("test_synbols.py"),
        user_properties=[],
        get_closest_marker=lambda name: marker if name == "cfcheck_kind" else None,
    )
    return ScoreRecorder(session, node), records


def test_a_score_of_a_card_its_kind_does_not_declare_is_refused_before_recording():
    recorder, records = _recorder("latent")
    with pytest.raises(KindError, match=r"kind 'latent' records the metric 'd1', whose card 'd1' it does not declare"):
        recorder("d1", torch.ones(4))
    with pytest.raises(KindError, match=r"the metric 'fid_target:digit', whose card 'fid_target'"):
        recorder.unavailable("fid_target:digit", "no reference")
    assert records == []
    record = recorder("synbols_s_sharp", torch.ones(4))  # a card the kind declares
    assert record.metric == "synbols_s_sharp" and record.kind == "latent" and len(records) == 1
    anywhere, kept = _recorder(None)  # a score without a kind ("-") is not a kind's
    anywhere("d1", torch.ones(4))
    assert kept[0].kind == "-"
