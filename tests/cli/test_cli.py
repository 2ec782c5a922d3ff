"""The cfcheck console script."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from cfcheck.cli import main
from cfcheck.metrics.cards import CARDS
from cfcheck.records import ScoreRecord
from cfcheck.scorecard import build_scorecard, write_scorecard


def test_cards_prints_every_card(capsys):
    assert main(["cards"]) == 0
    out = capsys.readouterr().out
    for card in CARDS.values():
        assert card.name in out


def test_unknown_card_is_an_error_naming_the_keys(capsys):
    assert main(["cards", "sharpness"]) == 2
    assert "sharpness" in capsys.readouterr().err


def test_models_lists_hashes_and_quality(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "morpho/cnn" in out and "test_accuracy=" in out and "oracle" in out


def _scorecard(tmp_path, passed):
    record = ScoreRecord(
        nodeid="x", suite="validity", metric="target_accuracy", task="cnn/ideal/seed0", value=0.5, n=10,
        direction="higher", threshold=">= 0.8", passed=passed,
    )
    card = build_scorecard(
        [record], method="demo", profile={"name": "quick"}, status="complete", seeds=[0], device="cpu",
        models={}, outcomes={}, started=datetime.now(timezone.utc),
    )
    return write_scorecard(tmp_path, card, [record])


@pytest.mark.parametrize(("passed", "code"), [(True, 0), (False, 1)])
def test_summary_exit_code_reflects_failures(tmp_path, capsys, passed, code):
    path = _scorecard(tmp_path, passed)
    assert main(["summary", str(path.parent)]) == code
    out = capsys.readouterr().out
    assert "target_accuracy" in out and ("FAIL" in out) == (not passed)


def test_summary_of_a_missing_scorecard(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "nowhere.json")]) == 2
    assert "no cfcheck scorecard" in capsys.readouterr().err


def test_retrain_smoke_writes_a_loadable_manifest(tmp_path):
    assert main(["retrain", "--smoke", "--only", "mlp", "--out", str(tmp_path)]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "morpho/mlp" in manifest["models"]
    assert (tmp_path / manifest["models"]["morpho/mlp"]["file"]).is_file()
