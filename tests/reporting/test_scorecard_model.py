"""The typed scorecard model every format reads (:mod:`cfcheck.reporting.model`), and the scorecard's
``calibration`` section: a page drawn on a machine without the run's domains is the page drawn with
them; a scorecard written before the section renders without markers and says so."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

import cfcheck.domains as domains_package
import cfcheck.domains.registry as registry
from cfcheck.calibration import store as calibration_store
from cfcheck.cli import main as cfcheck
from cfcheck.reporting import evidence as evidence_module
from cfcheck.reporting.calibration_record import collect_calibration
from cfcheck.reporting.evidence_summary import CardEvidence, ControlRange
from cfcheck.reporting.formats import render_all
from cfcheck.reporting.html_charts import NO_CALIBRATION
from cfcheck.reporting.model import Scorecard

PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "published"


def _score(kind, domain, suite, metric, task, verdict, value=0.5, **extra):
    return {
        "kind": kind,
        "domain": domain,
        "suite": suite,
        "metric": metric,
        "task": task,
        "value": value,
        "ci_low": value - 0.1,
        "ci_high": value + 0.1,
        "n": 10,
        "threshold": None if verdict is None else ">= 0.4",
        "verdict": verdict,
        **extra,
    }


def _card(scores, **extra):
    return {
        "format": 3,
        "status": "complete",
        "method": "m",
        "profile": {"name": "quick"},
        "outcomes": {"passed": 1},
        "provenance": {"finished": "2026-01-01T00:00:00+00:00"},
        "scores": scores,
        **extra,
    }


def _break_the_domains(monkeypatch):
    """Every way to look a domain or its calibration files up raises: a machine without the run's domains."""

    def unusable(*args, **kwargs):
        raise RuntimeError("no domain can be looked up on this machine")

    for module, names in (
        (registry, ("known_domain", "resolve_domain", "registered_domains")),
        (domains_package, ("get_domain", "available_domains")),
        (calibration_store, ("calibration_path", "load_calibration_values")),
        (evidence_module, ("load_evidence",)),
    ):
        for name in names:
            monkeypatch.setattr(module, name, unusable)


def test_the_model_groups_the_scores_as_the_pages_show_them():
    scores = [
        _score("ka", "d1", "s1", "m1", "c1/x/seed0", "pass"),
        _score("ka", "d1", "s2", "m2", "c1/y/seed0", "fail"),
        _score("ka", "d2", "s1", "m1", "c2/x/seed0", "pass"),
        _score("kb", "d1", "s1", "m3", "t/seed0", None),
        _score("ka", "d1", "s1", "m1", "c2/x/seed0", "inconclusive"),
    ]
    card = Scorecard.from_json(_card(scores))
    assert list(card.sections) == [("ka", "d1"), ("ka", "d2"), ("kb", "d1")]  # order of first appearance
    first = card.sections["ka", "d1"]
    assert list(first.suites) == ["s1", "s2"] and len(first.suites["s1"]) == 2
    assert {name: len(group) for name, group in first.scores.by_task_group().items()} == {"c1": 2, "c2": 1}
    assert first.scores.counts == {"pass": 1, "fail": 1, "inconclusive": 1, "error": 0, "none": 0}
    assert list(card.scores.by_kind_suite()) == [("ka", "s1"), ("ka", "s2"), ("kb", "s1")]
    assert card.failing_count == 1 and card.scores.failing().scores[0].suite == "s2"
    assert tuple(card.headline) == (
        "FAIL",
        "FAIL: 1 of 3 suites have failing scores; judged: ka; no bars, reported only: kb (1 scores)",
    )
    assert card.kinds_by_judgement() == (["ka"], {"kb": 1})
    assert card.calibration is None  # no section: a scorecard written before cfcheck recorded one


def test_a_score_reads_its_bar_as_data_and_an_old_score_reads_as_dashes():
    bar = {"kind": "max", "bound": 2.0, "relative": "times_floor", "floor": 1.5, "value": 3.0}
    card = Scorecard.from_json(_card([_score("k", "d", "s", "m:v", "t", "pass", bar=bar), {"value": 1.0}]))
    recorded, old = card.scores
    assert recorded.bar_bound == 3.0 and recorded.card == "m" and recorded.identity is not None
    assert (old.kind, old.domain, old.suite, old.metric, old.task) == ("-",) * 5 and old.identity is None
    with pytest.raises(ValueError, match="'scores' list"):
        Scorecard.from_json({"method": "m"})


def test_a_card_evidence_summary_round_trips_through_the_json():
    summary = CardEvidence(
        "tcv", ("validity",), ("a", "b"), 3, (ControlRange("truth", "+", 0.9, 1.0, 3),), unit="seed", without_bar="x"
    )
    assert CardEvidence.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary
    with pytest.raises(ValueError, match="not a card's evidence summary"):
        CardEvidence.from_dict({"card_key": "tcv"})


@pytest.mark.parametrize("name", ["wachter-quick", "scm_vae-quick"])
def test_a_published_page_draws_the_same_without_the_domains(name, monkeypatch):
    folder = PUBLISHED / name
    if not (folder / "scorecard.json").is_file():
        pytest.skip(f"{folder} is not published")
    card = json.loads((folder / "scorecard.json").read_text())
    card["calibration"] = collect_calibration(card)  # what a run writes now
    with_domains = render_all(card, folder)
    section = next(iter(card["calibration"].values()))
    markers = sum(len(controls) for signed in section["controls"].values() for controls in signed.values())
    assert markers > 0 and section["evidence"]  # there is something to lose
    _break_the_domains(monkeypatch)
    assert render_all(card, folder) == with_domains  # Markdown, HTML, badge
    page = html.unescape(with_domains[1])
    assert page.count("(expected to pass): ") + page.count("(expected to fail): ") == markers
    rows = sum(len(rows) for rows in section["evidence"].values())
    assert page.count("<dt>measured on ") == rows
    card.pop("calibration")  # as the scorecard was published: written before the section
    markdown, old_page, badge = render_all(card, folder)
    assert (markdown, badge) == (with_domains[0], with_domains[2])
    old_page = html.unescape(old_page)
    assert old_page.count(NO_CALIBRATION) == 1
    assert "(expected to pass): " not in old_page and "<dt>measured on " not in old_page


def test_a_users_domain_keeps_its_markers_and_evidence_in_the_scorecard(tmp_path, monkeypatch):
    """The values of a calibration folder the run found are in the JSON; the page needs nothing else."""
    folder = tmp_path / "mine"
    folder.mkdir()
    values = {
        "kx/mine/s/target_accuracy[t/seed0]": {
            "good": {"value": 0.9, "expected": "+"},
            "bad": {"value": 0.1, "expected": "-"},
            "other": {"value": 0.5, "expected": ""},
        }
    }
    (folder / "calibration-quick.json").write_text(json.dumps({"domain": "mine", "profile": "quick", "values": values}))
    monkeypatch.setattr(
        calibration_store, "calibration_path", lambda domain, profile: folder / f"calibration-{profile}.json"
    )
    card = _card(
        [_score("kx", "mine", "s", "target_accuracy", "t/seed0", "pass")],
        profile={"name": "quick", "domains": {"mine": {"bars": "calibrated", "bars_file": str(folder / "bars.json")}}},
    )
    card["calibration"] = collect_calibration(card)
    entry = card["calibration"]["kx/mine"]
    assert entry["controls"] == {"kx/mine/s/target_accuracy[t/seed0]": {"+": {"good": 0.9}, "-": {"bad": 0.1}}}
    (row,) = entry["evidence"]["target_accuracy"]
    assert row["profile"] == "quick" and {r["control"] for r in row["summary"]["ranges"]} == {"good", "bad", "other"}
    _break_the_domains(monkeypatch)
    page = html.unescape(render_all(json.loads(json.dumps(card)), tmp_path)[1])
    assert "good (expected to pass): 0.9" in page and "bad (expected to fail): 0.1" in page and "other (" not in page
    assert "<dt>measured on mine</dt><dd>quick profile (`cfcheck calibrate`, 1 task score per control)" in page
    assert NO_CALIBRATION not in page


def test_an_old_scorecard_renders_without_crashing_and_says_it_has_no_calibration():
    """A scorecard of format 2 (no kind, domain, protocols, calibration or bar data) still renders."""
    old = {
        "format": 2,
        "status": "complete",
        "method": "old",
        "profile": {"name": "quick"},
        "provenance": {"cfcheck_version": "0.0.9"},
        "scores": [
            {"suite": "validity", "metric": "tcv", "task": "cnn/ideal/seed0", "value": 0.2, "n": 10, "verdict": "fail"}
        ],
    }
    markdown, page, badge = render_all(old)
    assert "**FAIL**" in markdown and "fail 1" in badge
    assert html.unescape(page).count(NO_CALIBRATION) == 1


def test_a_damaged_calibration_section_costs_its_markers_only():
    score = _score("k", "d", "s", "m", "t", "pass")
    for section in ({"k/d": "not an entry"}, {"k/d": {"controls": {"k/d/s/m[t]": {"+": {"c": "x"}}}}}, []):
        page = html.unescape(render_all(_card([score], calibration=section))[1])
        assert "(expected to pass)" not in page and NO_CALIBRATION not in page


def test_recalibrate_adds_the_section_to_an_old_scorecard(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    source = PUBLISHED / "scm_vae-quick" / "scorecard.json"
    if not source.is_file():
        pytest.skip(f"{source} is not published")
    card = json.loads(source.read_text())
    card.pop("calibration", None)  # as a scorecard written before the section was
    (folder / "scorecard.json").write_text(json.dumps(card))
    assert cfcheck(["render", str(folder), "--recalibrate"]) == 0
    written = json.loads((folder / "scorecard.json").read_text())
    assert written.pop("calibration") == collect_calibration(card) and written == card  # nothing else changed
    assert "(expected to pass): " in html.unescape((folder / "scorecard.html").read_text())
    assert f"recalibrated {folder / 'scorecard.json'}" in capsys.readouterr().out
