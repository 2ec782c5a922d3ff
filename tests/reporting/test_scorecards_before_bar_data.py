"""A scorecard written before bars were data (format 3, each score's bar as text only, as the published
runs are) is still read where scorecards are read: records, ``cfcheck summary`` (alone and against it as a
baseline), ``cfcheck compare`` and ``cfcheck merge``; its bar text is kept as written."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

import cfcheck
from cfcheck.cli import main
from cfcheck.core.records import ScoreRecord
from cfcheck.reporting.merge import merge_runs

PUBLISHED = Path(cfcheck.__file__).resolve().parent.parent / "reports" / "published"


def _old(name: str) -> dict:
    card = json.loads((PUBLISHED / name / "scorecard.json").read_text(encoding="utf-8"))
    assert card["format"] == 3
    if any("bar" in s for s in card["scores"]):  # the published runs were regenerated with bar data
        for score in card["scores"]:
            score.pop("bar", None)
    return card


def _run(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(PUBLISHED / name, folder)
    (folder / "scorecard.json").write_text(json.dumps(_old(name)), encoding="utf-8")
    return folder


def test_records_keep_the_text_and_have_no_bar() -> None:
    card = _old("identity-quick")
    records = [ScoreRecord.from_dict(s) for s in card["scores"]]
    assert [r.threshold for r in records] == [s["threshold"] for s in card["scores"]]
    assert {r.bar for r in records} == {None} and sum(r.threshold is not None for r in records) > 100
    assert [r.to_dict(with_samples=False)["threshold"] for r in records] == [s["threshold"] for s in card["scores"]]


def test_summary_and_summary_against_it_as_a_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, "identity-quick")
    floor_bar = next(s["threshold"] for s in _old("identity-quick")["scores"] if "floor" in (s["threshold"] or ""))
    assert main(["summary", str(run)]) == 1  # the identity control fails validity
    assert floor_bar in capsys.readouterr().out
    assert main(["summary", str(run), "--against", str(run / "scorecard.json")]) == 1  # its errors fail again
    against = capsys.readouterr().out
    headings = [line for line in against.splitlines() if line.startswith("#### ")]
    assert [h.split(" (")[0] for h in headings] == ["#### Could not be computed", "#### Known failures"]
    assert "| &lt;= 0.2 |" in against  # the stored text is the bar the changes show


def test_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_run(tmp_path, name) for name in ("identity-quick", "truth-quick")]
    args = ["compare", *map(str, runs), "--resamples", "50", "--set-permutations", "0", "--allow"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "identity" in out and "truth" in out


def test_merge_of_shards_written_before_bar_data(tmp_path: Path) -> None:
    whole = _old("identity-quick")
    shards = []
    for index in (1, 2):
        card = copy.deepcopy(whole)
        card["profile"]["shard"] = f"{index}/2"
        card["scores"] = whole["scores"][index - 1 :: 2]
        folder = tmp_path / f"shard{index}"
        folder.mkdir()
        (folder / "scorecard.json").write_text(json.dumps(card), encoding="utf-8")
        shards.append(folder)
    merged = json.loads(merge_runs(shards, tmp_path / "merged").read_text(encoding="utf-8"))
    key = ("kind", "domain", "suite", "metric", "task")
    before = {tuple(s[k] for k in key): s["threshold"] for s in whole["scores"]}
    after = {tuple(s[k] for k in key): s["threshold"] for s in merged["scores"]}
    assert after == before
    assert {s["bar"] for s in merged["scores"]} == {None}


@pytest.mark.parametrize("spelt", ["road_gap:morf", "road_gap_morf"])  # now, and before one spelling
def test_a_domains_own_bar_is_listed_under_its_card_in_either_spelling(spelt: str) -> None:
    from cfcheck.reporting.html_cards import domain_bar_lines

    own = {spelt: {"bar": ">= 0.03", "rationale": "r"}, "road_area:morf": {"bar": ">= 0.5", "rationale": "other card"}}
    assert domain_bar_lines({"morpho": {"bars": "cards", "domain_bars": own}}, "road_gap") == [
        (f"bar on morpho ({spelt})", ">= 0.03: r")
    ]
    extends = {"bars": "cards", "domain_bars": {"d1_5": {"bar": "<= 3", "rationale": "its own card"}}}
    assert domain_bar_lines({"morpho": extends}, "d1") == []  # d1_5 is a card, not d1's
