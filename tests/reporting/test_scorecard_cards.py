"""A scorecard carries the metric cards cfcheck does not bundle (issue 41): a card round-trips through its
JSON field for field, the ``cards`` section holds a kind's own cards and none of cfcheck's, the pages read a
card from the section first and the registry second, and ``cfcheck merge`` unites the shards' sections,
refusing one key defined two ways. The run of a kind of another package, rendered in a process without it,
is tests/kinds/test_fifth_kind.py."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

import cfcheck
import cfcheck.metrics.cards as card_registry
from cfcheck.core.thresholds import Bar
from cfcheck.metrics.card import PaperCode, PaperDifference
from cfcheck.metrics.card_json import CardJsonError, card_from_json, card_to_json, unbundled_cards_json
from cfcheck.reporting.html_cards import cards_section
from cfcheck.reporting.markdown import render_markdown
from cfcheck.reporting.merge import merge_runs
from cfcheck.reporting.model import Scorecard
from cfcheck.reporting.scorecard import unbundled_sections
from tests.toy_cards import toy_card as _card

PUBLISHED = Path(cfcheck.__file__).resolve().parent.parent / "reports" / "published"


#: a card that uses every field, with values no default has
FULL = _card(
    "toy_full",
    direction="lower",
    range=(-math.inf, math.inf),
    notes="notes",
    bar=Bar(1.5, "max", "times_floor"),
    profile_bars={"quick": Bar(2.0, "max", "plus_floor")},
    tolerance=0.05,
    rationale="between the controls",
    failure_hint="too far",
    interval="draws and inputs, crossed",
    computed_by=("toypkg.metrics.full",),
    differences=(
        PaperDifference(PaperCode("A 2020", "https://example.org/a", "0" * 40), "a.py:1", "sums", "divide", True),
        PaperDifference(PaperCode("B 2021", "PyPI: b 1.0", None, "no history"), "b.py:2", "means"),
    ),
    revision=3,
)


def _strict(data):
    """``data`` through strict JSON text (no NaN or infinity), as another reader would take it."""
    return json.loads(json.dumps(data, allow_nan=False))


def test_every_bundled_card_and_a_card_of_every_field_round_trip_through_strict_json():
    for key, card in [*card_registry.CARDS.items(), (FULL.key, FULL)]:
        assert card_from_json(_strict(card_to_json(card)), key) == card, key
    data = card_to_json(FULL)
    assert data["range"] == [None, None]  # JSON has no infinity
    assert data["profile_bars"] == {"quick": {"bound": 2.0, "kind": "max", "relative": "plus_floor"}}
    assert [d["code"]["commit"] for d in data["differences"]] == ["0" * 40, None]


def test_a_card_json_that_is_no_card_is_refused_naming_the_card_and_what_is_missing():
    data = card_to_json(FULL)
    del data["formula"]
    with pytest.raises(CardJsonError, match=r"metric card 'toy_full' cannot be read: the field 'formula'"):
        card_from_json(data)
    with pytest.raises(CardJsonError, match=r"filed under 'toy_other' has the key 'toy_full'"):
        card_from_json(card_to_json(FULL), "toy_other")
    with pytest.raises(CardJsonError, match=r"'range' is \[low, high\]"):
        card_from_json({**card_to_json(FULL), "range": 3})
    with pytest.raises(CardJsonError, match="'cards' section is an object"):
        Scorecard.from_json({"scores": [], "cards": ["toy_full"]})


def test_the_section_holds_a_kinds_own_cards_and_none_cfcheck_bundles(registry_restored):
    assert unbundled_cards_json(["target_accuracy", "coverage:x", "no_such_card"]) == {}
    card_registry.register_cards([FULL, _card()], "kind 'toy'")
    scores = [{"kind": "vce", "metric": m} for m in ("target_accuracy", "toy_rate:a", "toy_full", "coverage")]
    sections = unbundled_sections(scores)
    assert sections == {"cards": {"toy_full": card_to_json(FULL), "toy_rate": card_to_json(_card())}}
    # a bundled kind's scores of bundled cards: no section at all (the published scorecards stay as they are)
    assert unbundled_sections([{"kind": "vce", "metric": "target_accuracy"}, {"kind": "-", "metric": "x"}]) == {}


def _scorecard(**sections) -> dict:
    score = {"kind": "toy", "domain": "gmm", "suite": "s", "metric": "toy_rate", "task": "points/seed0"}
    score.update(value=0.9, n=8, threshold=">= 0.5", verdict="pass")
    return {"method": "m", "status": "complete", "profile": {"name": "quick"}, "scores": [score], **sections}


def test_the_pages_read_a_card_and_a_kinds_label_from_the_scorecard_first():
    assert "toy_rate" not in card_registry.CARDS  # this process has no kind that defines it
    section = {"toy_rate": card_to_json(_card(rationale="r", bar=Bar(0.5, "min"), notes="from the scorecard"))}
    card = Scorecard.from_json(_scorecard(cards=section, kinds={"toy": {"task_group_label": "point set"}}))
    assert card.card("toy_rate") == card_from_json(section["toy_rate"])
    page = cards_section(card)
    assert "<b>Toy rate</b> <code>toy_rate</code>" in page and "<dd>from the scorecard</dd>" in page
    assert "<dt>bar (bundled domains)</dt><dd>&gt;= 0.5</dd>" in page
    assert "| point set | s | toy_rate |" in render_markdown(card)
    # without the sections, the card is unknown here and the label is the default one
    bare = Scorecard.from_json(_scorecard())
    assert bare.card("toy_rate") is None and "toy_rate" not in cards_section(bare)
    assert "| task | s | toy_rate |" in render_markdown(bare)
    # the scorecard's definition comes before the registry's, even of a card cfcheck bundles
    own = {**card_to_json(card_registry.CARDS["target_accuracy"]), "notes": "as the run defined it"}
    assert (
        Scorecard.from_json(_scorecard(cards={"target_accuracy": own})).card("target_accuracy").notes
        == "as the run defined it"
    )
    assert Scorecard.from_json(_scorecard()).card("target_accuracy") is card_registry.CARDS["target_accuracy"]


def _shards(tmp_path: Path, *sections: dict) -> list[Path]:
    whole = json.loads((PUBLISHED / "identity-quick" / "scorecard.json").read_text(encoding="utf-8"))
    folders = []
    for index, extra in enumerate(sections, start=1):
        card = copy.deepcopy(whole)
        card["profile"]["shard"] = f"{index}/{len(sections)}"
        card["scores"] = whole["scores"][index - 1 :: len(sections)]
        card.update(extra)
        folder = tmp_path / f"shard{index}"
        folder.mkdir(parents=True)
        (folder / "scorecard.json").write_text(json.dumps(card), encoding="utf-8")
        folders.append(folder)
    return folders


def test_merge_unites_the_shards_sections_and_refuses_a_key_defined_two_ways(tmp_path: Path):
    full, rate = card_to_json(FULL), card_to_json(_card())
    kinds = {"toy": {"task_group_label": "point set"}}
    shards = _shards(tmp_path / "a", {"cards": {"toy_rate": rate}}, {"cards": {"toy_full": full, "toy_rate": rate}})
    merged = json.loads(merge_runs(shards, tmp_path / "merged").read_text(encoding="utf-8"))
    assert merged["cards"] == {"toy_full": full, "toy_rate": rate} and "kinds" not in merged
    shards = _shards(tmp_path / "b", {}, {"kinds": kinds})
    merged = json.loads(merge_runs(shards, tmp_path / "merged_b").read_text(encoding="utf-8"))
    assert merged["kinds"] == kinds and "cards" not in merged
    other = {**rate, "formula": "another formula"}
    shards = _shards(tmp_path / "c", {"cards": {"toy_rate": rate}}, {"cards": {"toy_rate": other}})
    with pytest.raises(ValueError, match=r"the metric card 'toy_rate' is defined differently in .*shard1 and .*shard2"):
        merge_runs(shards, tmp_path / "merged_c")
