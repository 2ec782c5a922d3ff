"""The cfcheck console script."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from cfcheck.cli import main
from cfcheck.core.records import ScoreRecord
from cfcheck.metrics.cards import CARDS
from cfcheck.reporting.scorecard import build_scorecard, write_scorecard


def test_cards_prints_every_card(capsys):
    assert main(["cards"]) == 0
    out = capsys.readouterr().out
    for card in CARDS.values():
        assert card.name in out


def test_cards_prints_what_the_controls_measured_on_the_bundled_domains(capsys):
    from cfcheck.domains import get_domain
    from cfcheck.reporting.evidence import measured_evidence

    assert main(["cards", "target_accuracy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    measured = [line for line in lines if line.startswith("  measured:")]
    assert measured == [f"  measured:      {s}" for s in measured_evidence(get_domain("morpho"), "target_accuracy")]
    assert len(measured) == 1
    assert lines.index(measured[0]) == next(i for i, line in enumerate(lines) if line.startswith("  rationale:")) + 1
    assert main(["cards", "lpips"]) == 0  # never calibrated: no measured line
    assert "measured:" not in capsys.readouterr().out


def test_unknown_card_is_an_error_naming_the_keys(capsys):
    assert main(["cards", "sharpness"]) == 2
    assert "sharpness" in capsys.readouterr().err


def test_cards_shows_where_a_metric_is_computed(capsys):
    """A score's key (``key:variant``) reads its card, and each function it names is shown with the
    file and line that define it."""
    import inspect

    from cfcheck.kinds.attribution.removal import removal_gap

    assert main(["cards", "road_gap:morf"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = inspect.getsourcelines(removal_gap)[1]
    assert (
        f"  computed by:   cfcheck.kinds.attribution.removal.removal_gap (cfcheck/kinds/attribution/removal.py:{line})"
    ) in lines
    assert main(["cards", "orcale_score"]) == 2
    assert "did you mean 'oracle_score'?" in capsys.readouterr().err


def test_models_lists_hashes_and_quality(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "morpho/cnn" in out and "test_accuracy=" in out and "oracle" in out


def _scorecard(tmp_path, verdict):
    record = ScoreRecord(
        nodeid="x",
        suite="validity",
        metric="target_accuracy",
        task="cnn/ideal/seed0",
        value=0.5,
        n=10,
        direction="higher",
        threshold=">= 0.8",
        verdict=verdict,
    )
    card = build_scorecard(
        [record],
        method="demo",
        profile={"name": "quick"},
        status="complete",
        seeds=[0],
        device="cpu",
        models={},
        outcomes={},
        started=datetime.now(timezone.utc),
    )
    return write_scorecard(tmp_path, card, [record])


@pytest.mark.parametrize(
    ("verdict", "code", "label"), [("pass", 0, "pass"), ("fail", 1, "FAIL"), ("inconclusive", 0, "inconclusive")]
)
def test_summary_exit_code_reflects_failures(tmp_path, capsys, verdict, code, label):
    path = _scorecard(tmp_path, verdict)
    assert main(["summary", str(path.parent)]) == code
    out = capsys.readouterr().out
    assert "target_accuracy" in out and f" {label}" in out
    assert main(["summary", "--failures", str(path.parent)]) == code
    assert ("target_accuracy" in capsys.readouterr().out) == (verdict != "pass")


def test_summary_of_a_missing_scorecard(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "nowhere.json")]) == 2
    assert "no cfcheck scorecard" in capsys.readouterr().err


def test_retrain_smoke_writes_a_loadable_manifest(tmp_path):
    assert main(["retrain", "--domain", "morpho", "--smoke", "--only", "mlp", "--out", str(tmp_path)]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "morpho/mlp" in manifest["models"]
    assert (tmp_path / manifest["models"]["morpho/mlp"]["file"]).is_file()


def test_retrain_without_a_domain_names_the_domains_holding_the_models(capsys):
    """ "mlp" is a model of two bundled domains: retrain asks which; "cnn" of one: it is retrained there."""
    from cfcheck.cli.reference import _domain_holding
    from cfcheck.domains import available_domains

    with pytest.raises(ValueError, match="name the domain with --domain .the domains holding mlp: gmm, morpho"):
        _domain_holding(["mlp"], available_domains())
    assert _domain_holding(["cnn", "oracle_lenet"], available_domains()) == "morpho"


def test_models_of_one_domain_and_of_an_unknown_one(capsys):
    assert main(["models", "--domain", "morpho"]) == 0
    assert "morpho/cnn" in capsys.readouterr().out
    assert main(["models", "--domain", "nosuchdomain"]) == 2
    err = capsys.readouterr().err
    assert "unknown domain 'nosuchdomain'" in err and "glyphs" in err  # the known ones are named


def test_a_domain_with_its_own_training_hook_is_retrained_through_it(tmp_path, capsys):
    assert main(["models", "--domain", "glyphs"]) == 0
    assert "glyphs/generator" in capsys.readouterr().out
    assert (
        main(["retrain", "--domain", "glyphs", "--smoke", "--only", "classifier_fonts6_corr50", "--out", str(tmp_path)])
        == 0
    )
    assert "[classifier_fonts6_corr50]" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert list(manifest["models"]) == ["glyphs/classifier_fonts6_corr50"]
    assert main(["retrain", "--domain", "glyphs", "--smoke", "--only", "decoder", "--out", str(tmp_path)]) == 2
    assert "unknown glyph model" in capsys.readouterr().err


def test_retrain_an_unknown_domain_is_an_error(tmp_path, capsys):
    assert main(["retrain", "--domain", "nosuchdomain", "--smoke", "--out", str(tmp_path)]) == 2
    assert "unknown domain 'nosuchdomain'" in capsys.readouterr().err
