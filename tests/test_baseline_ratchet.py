"""The baseline ratchet without a run: every score's status against its stored self, old and bad baseline
files, what saving says, the changes summary and its cap, the views' verdicts and `cfcheck summary --against`."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cfcheck.baseline import Baseline, BaselineError, StoredScore, classify
from cfcheck.baseline.compare import compare_scorecard
from cfcheck.baseline.run import finish_baseline_run, save_baseline
from cfcheck.cli import main
from cfcheck.profiles import resolve_profile
from cfcheck.reporting import tables
from cfcheck.reporting.badge import badge_state
from cfcheck.reporting.changes import render_changes
from cfcheck.reporting.model import headline


def _judge(stored_value, stored_verdict, value, verdict, *, mode="xfail", tolerance=0.05, failing=None):
    stored = None if stored_verdict == "absent" else StoredScore("k", stored_value, stored_verdict)
    return classify(
        stored,
        key="k",
        value=value,
        verdict=verdict,
        direction="higher",
        tolerance=tolerance,
        failing=verdict == "fail" if failing is None else failing,
        known_failures=mode,
    ).status


@pytest.mark.parametrize(
    ("stored", "now", "mode", "status"),
    [
        ((0.5, "fail"), (0.48, "fail"), "xfail", "known_failure"),  # no worse beyond 0.05
        ((0.5, "fail"), (0.48, "fail"), "strict", "known_failure"),
        ((0.5, "fail"), (0.48, "fail"), "fail", "still_failing"),
        ((0.5, "fail"), (0.40, "fail"), "xfail", "regressed"),  # a known failure that got worse
        ((0.9, "pass"), (0.70, "fail"), "xfail", "regressed"),
        ((0.9, "pass"), (0.88, "fail"), "xfail", "new_failure"),  # within tolerance, but below the bar now
        ((None, "absent"), (0.1, "fail"), "xfail", "new_failure"),  # not in the baseline
        ((None, "absent"), (0.9, "pass"), "xfail", "new"),
        ((0.5, "fail"), (0.95, "pass"), "xfail", "fixed"),
        ((0.5, "inconclusive"), (0.95, "pass"), "strict", "fixed_strict"),
        ((None, "error"), (0.95, "pass"), "xfail", "fixed"),
        ((None, "error"), (0.1, "fail"), "xfail", "new_failure"),  # not computed then: no known value to hold
        ((0.9, "pass"), (float("nan"), "error"), "xfail", "error"),
        ((0.8, None), (0.9, None), "xfail", "improved"),
        ((0.8, None), (0.81, None), "xfail", "unchanged"),
    ],
)
def test_each_status(stored, now, mode, status):
    assert _judge(*stored, *now, mode=mode) == status


def test_an_inconclusive_score_misses_its_bar_only_where_the_run_fails_it():
    assert _judge(0.7, "inconclusive", 0.69, "inconclusive", failing=True) == "known_failure"
    assert _judge(0.9, "pass", 0.88, "inconclusive", failing=True) == "new_failure"
    assert _judge(0.9, "pass", 0.88, "inconclusive", failing=False) == "unchanged"


@given(
    stored=st.floats(-10, 10, allow_nan=False),
    value=st.floats(-10, 10, allow_nan=False),
    tolerance=st.floats(0, 2, allow_nan=False),
    direction=st.sampled_from(["higher", "lower"]),
)
def test_a_known_failure_stays_known_exactly_while_it_is_no_worse_than_its_tolerance(
    stored, value, tolerance, direction
):
    judgement = classify(
        StoredScore("k", stored, "fail"),
        key="k",
        value=value,
        verdict="fail",
        direction=direction,
        tolerance=tolerance,
        failing=True,
        known_failures="xfail",
    )
    worse_by = stored - value if direction == "higher" else value - stored
    assert judgement.status == ("regressed" if worse_by > tolerance else "known_failure")
    assert judgement.fails_run == (worse_by > tolerance)


def _score(metric="target_accuracy", value=0.9, verdict="pass", task="cnn/ideal/seed0", **extra):
    return {
        "kind": "vce",
        "domain": "morpho",
        "suite": "validity",
        "metric": metric,
        "task": task,
        "value": value,
        "ci_low": None if value is None else value - 0.05,
        "ci_high": None if value is None else value + 0.05,
        "n": 120,
        "direction": "higher",
        "threshold": ">= 0.8",
        "verdict": verdict,
        "nodeid": f"suites/vce/test_validity.py::test_{metric}[{task}]",
        **extra,
    }


def _card(scores, status="complete", profile="quick", method="m"):
    return {"format": 3, "status": status, "method": method, "profile": {"name": profile}, "scores": scores}


def test_old_baselines_still_load(tmp_path):
    # format 1: a verdict only as "passed"; format 2: no kind or domain (matched by metric[task])
    old = {"format": 1, "scores": [{"suite": "validity", "metric": "tcv", "task": "t", "value": 0.4, "passed": False}]}
    (tmp_path / "v1.json").write_text(json.dumps(old))
    entry = Baseline.load(tmp_path / "v1.json").entry("tcv[t]")
    assert entry is not None and entry.verdict == "fail" and entry.missed_bar


def test_a_bad_or_incomplete_baseline_is_refused_saying_what_to_do(tmp_path):
    (tmp_path / "cut.json").write_text(json.dumps(_card([_score()], status="incomplete")))
    with pytest.raises(BaselineError, match="incomplete run .*--cfcheck-save-baseline"):
        Baseline.load(tmp_path / "cut.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": 3, "scores": {}}))
    with pytest.raises(BaselineError, match="not a cfcheck scorecard.*save a baseline with --cfcheck-save-baseline"):
        Baseline.load(tmp_path / "other.json")
    (tmp_path / "std.json").write_text(json.dumps(_card([_score()], profile="standard")))
    with pytest.raises(BaselineError, match="saved at the standard profile and this run is quick"):
        Baseline.load(tmp_path / "std.json").check_profile("quick")


def test_saving_says_what_was_stored_and_refuses_an_incomplete_run(tmp_path):
    card = _card([_score(), _score("committee_oracle_target_accuracy", 0.1, "fail"), _score("cout", 0.6, None)])
    source = tmp_path / "scorecard.json"
    source.write_text(json.dumps(card))
    said = save_baseline(tmp_path / "b" / "base.json", source, card, complete=True)
    assert said == (
        f"baseline saved to {tmp_path / 'b' / 'base.json'}: 3 scores, 1 missing their bars (1 failed, "
        "0 inconclusive, 0 could not be computed), 1 passed, 1 without a bar"
    )
    assert json.loads((tmp_path / "b" / "base.json").read_text()) == card
    refused = save_baseline(tmp_path / "cut.json", source, card, complete=False)
    assert refused.startswith(f"baseline NOT saved to {tmp_path / 'cut.json'}: the run is incomplete")
    assert not (tmp_path / "cut.json").exists()
    assert "recorded no score" in save_baseline(tmp_path / "none.json", source, _card([]), complete=True)


def _changes(run_scores, base_scores, **kwargs):
    baseline = Baseline.from_scorecard(_card(base_scores), "base.json")
    return compare_scorecard(_card(run_scores), baseline, tolerances={"target_accuracy": 0.05, "tcv": 0.05}, **kwargs)


def test_the_changes_name_what_got_worse_with_values_and_intervals():
    base = [
        _score("target_accuracy", 1.0),
        _score("tcv", 0.3, "fail"),
        _score("tcv", 0.2, "fail", task="robust_cnn/ideal/seed0"),
        _score("lvs_target", 0.1, "fail"),
    ]
    run = [
        _score("target_accuracy", 0.7, "fail"),
        _score("tcv", 0.29, "fail"),
        _score("tcv", 0.9, "pass", task="robust_cnn/ideal/seed0"),
    ]
    changes = _changes(run, base)  # lvs_target's test is not known to have run: not compared, not vanished
    assert [c.status for c in changes.scores] == ["regressed", "known_failure", "fixed"]
    assert changes.not_run == 1 and not changes.vanished
    text = render_changes(changes)
    assert text.splitlines()[2].startswith("**FAIL**: 1 score got worse (1 regressed) · 1 fixed · 1 known failures")
    assert (
        "| validity/target_accuracy | vce/morpho/cnn/ideal/seed0 | 0.7 [0.65, 0.75], fail | 1 [0.95, 1.05], pass "
        "| -0.3 (0.05) | >= 0.8 |" in text
    )
    assert "#### Fixed (1)" in text and "1 of its scores not run here" in text


def test_a_score_whose_test_ran_without_recording_it_vanished():
    base = [_score("tcv", 0.3, "fail"), _score("lvs_target", 0.1, "fail")]
    run = [_score("tcv", 0.3, "fail")]
    ran = [base[0]["nodeid"], base[1]["nodeid"]]
    changes = _changes(run, base, ran=ran)
    assert [v.score for v in changes.vanished] == ["validity/lvs_target"] and changes.failed
    assert "**FAIL**: 1 score got worse (1 vanished)" in render_changes(changes)
    # read back from a scorecard: its own baseline section lists what vanished
    card = _card(run) | {"baseline": {"vanished": [{"key": "vce/morpho/validity/lvs_target[cnn/ideal/seed0]"}]}}
    again = compare_scorecard(card, Baseline.from_scorecard(_card(base), "b"), tolerances={})
    assert len(again.vanished) == 1


def test_a_baseline_that_matches_nothing_fails_instead_of_gating_nothing():
    changes = _changes([_score(task="cnn/ideal/seed1")], [_score(task="cnn/ideal/seed0")])
    assert changes.failed and changes.worse == 0
    assert "no score of this run is in the baseline" in render_changes(changes)


def test_the_summary_caps_its_rows_for_a_pull_request_comment():
    base = [_score("tcv", 0.9, task=f"t{i}") for i in range(25)]
    run = [_score("tcv", 0.1, "fail", task=f"t{i}") for i in range(25)]
    text = render_changes(_changes(run, base), max_rows=10)
    assert text.count("| validity/tcv |") == 10
    assert "… and 15 more (`cfcheck summary RUN --against BASELINE --max-rows 0`)" in text
    assert render_changes(_changes(run, base), max_rows=0).count("| validity/tcv |") == 25
    with pytest.raises(ValueError, match="max_rows must be >= 0"):
        render_changes(_changes(run, base), max_rows=-1)


def test_the_views_do_not_contradict_the_exit_of_a_run_with_known_failures():
    known = _score("tcv", 0.3, "fail", baseline_status="known_failure")
    card = _card([_score(baseline_status="unchanged"), known])
    assert not tables.is_failing(known) and tables.score_rows(card)[1][-1] == "FAIL (known failure)"
    assert headline(card)[1] == (
        "PASS: no score fails (1 pass); 1 known failure (missed their bars in the baseline too, not worse)"
    )
    assert badge_state(card)[0] == "pass"
    strict = _card([_score(baseline_status="fixed_strict")])
    assert headline(strict)[0] == "FAIL" and badge_state(strict)[0] == "fail 1"
    gone = _card([_score()]) | {"baseline": {"vanished": [{"key": "x"}]}}
    assert headline(gone)[1] == "FAIL: 1 scores of the baseline vanished (their tests ran without recording them)"


def test_changes_md_is_written_beside_the_scorecard_and_goes_without_a_baseline(tmp_path):
    card = _card([_score("tcv", 0.1, "fail")])
    (tmp_path / "scorecard.json").write_text(json.dumps(card))
    baseline = Baseline.from_scorecard(_card([_score("tcv", 0.9)]), "base.json")
    notes = finish_baseline_run(tmp_path, card, baseline, resolve_profile("quick"), save_to=None, complete=True)
    assert notes == [f"changes against the baseline: {tmp_path / 'changes.md'}"]
    assert "#### Regressed (1)" in (tmp_path / "changes.md").read_text()
    finish_baseline_run(tmp_path, card, None, resolve_profile("quick"), save_to=None, complete=True)
    assert not (tmp_path / "changes.md").exists()


def test_cfcheck_summary_against_a_baseline(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here: the cards' tolerances
    run, base = tmp_path / "run", tmp_path / "base.json"
    run.mkdir()
    base.write_text(json.dumps(_card([_score("tcv", 0.3, "fail"), _score()])))
    (run / "scorecard.json").write_text(json.dumps(_card([_score("tcv", 0.3, "fail"), _score()])))
    assert main(["summary", str(run), "--against", str(base)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### cfcheck: m against the baseline\n\n**PASS**: nothing got worse · 0 fixed · 1 known")
    (run / "scorecard.json").write_text(
        json.dumps(_card([_score("tcv", 0.3, "fail"), _score(value=0.5, verdict="fail")]))
    )
    assert main(["summary", str(run), "--against", str(base), "--max-rows", "1"]) == 1
    assert "#### Regressed (1)" in capsys.readouterr().out
    assert main(["summary", str(run), "--max-rows", "1"]) == 2
    assert "--max-rows applies to --against BASELINE only" in capsys.readouterr().err
    assert main(["summary", str(run), "--against", str(tmp_path / "missing.json")]) == 2


def test_known_failures_setting_is_validated(tmp_path):
    assert resolve_profile("quick", {"known_failures": "strict"}).known_failures == "strict"
    assert resolve_profile("quick").known_failures == "xfail"
    with pytest.raises(ValueError, match=r"known_failures must be one of \('xfail', 'strict', 'fail'\), got 'maybe'"):
        resolve_profile("quick", {"known_failures": "maybe"})


def test_the_suites_have_markers(pytester):
    result = pytester.runpytest("--markers")
    for name in ("validity", "closeness", "realism", "ground_truth", "random_classifier", "contract", "composition"):
        result.stdout.fnmatch_lines([f"@pytest.mark.{name}: cfcheck's {name} suite (*"])
    result.stdout.fnmatch_lines(["@pytest.mark.realism: cfcheck's realism suite (scm, vce)"])


def test_tolerances_of_a_variant_key():
    from cfcheck.baseline.compare import tolerance_of

    assert tolerance_of("lvs_target:digit", {"lvs_target": 0.05}) == 0.05
    assert tolerance_of("unknown metric!", {}) == 0.0
