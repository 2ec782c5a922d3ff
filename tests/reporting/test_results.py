"""cfcheck.results: scorecards and their samples as long-format DataFrames, on hand-made run folders."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from cfcheck.results import SAMPLE_COLUMNS, SCORE_COLUMNS, ResultsError, load_samples, load_scores

REPO = Path(__file__).resolve().parents[2]


def make_run(
    root: Path, name: str, method: str, scores: list[dict], samples: str | None = None, seeds: list[int] | None = None
) -> Path:
    folder = root / name
    folder.mkdir()
    card = {
        "format": 3,
        "method": method,
        "profile": {"name": "quick"},
        "provenance": {"seeds": [0] if seeds is None else seeds},
        "scores": scores,
    }
    (folder / "scorecard.json").write_text(json.dumps(card))
    if samples is not None:
        (folder / "samples.csv").write_text(samples)
    return folder


def score(metric: str, task: str, value, **extra) -> dict:
    return {
        "kind": "vce",
        "domain": "morpho",
        "suite": "closeness",
        "metric": metric,
        "task": task,
        "value": value,
        "ci_low": None if value is None else value - 1,
        "ci_high": None if value is None else value + 1,
        "n": 12,
        "verdict": "pass",
        "threshold": "<= 78",
        **extra,
    }


def test_scores_of_two_runs_in_long_format(tmp_path):
    a = make_run(
        tmp_path, "a", "pkg.alpha", [score("d1", "cnn/ideal/seed3", 10.0), score("im1", "cnn/other/seed3", 0.5)]
    )
    b = make_run(tmp_path, "b", "pkg.beta", [score("d1", "cnn/ideal/seed3", None, verdict="skip")], seeds=[3])
    frame = load_scores([a, b / "scorecard.json"])  # a folder or its scorecard.json
    assert list(frame.columns) == SCORE_COLUMNS and len(frame) == 3
    assert list(frame["method"]) == ["pkg.alpha", "pkg.alpha", "pkg.beta"]
    first = frame.iloc[0]
    assert (first["kind"], first["domain"], first["suite"], first["metric"], first["task"]) == (
        "vce",
        "morpho",
        "closeness",
        "d1",
        "cnn/ideal/seed3",
    )
    assert (first["value"], first["ci_low"], first["ci_high"], first["n"]) == (10.0, 9.0, 11.0, 12)
    assert first["seed"] == 3 and first["run"] == str(a) and first["profile"] == "quick"
    assert pd.isna(frame.iloc[2]["value"]) and frame.iloc[2]["verdict"] == "skip"
    # direction from the metric cards (d1, im1: lower is better), not from the record
    assert list(frame["direction"]) == ["lower", "lower", "lower"]
    assert frame["bar"].isna().all()  # text-only bars (written before bars were data): no number
    assert load_scores(a).equals(load_scores([a]))


def test_the_bar_column_is_the_bound_each_score_was_held_to(tmp_path):
    from cfcheck.core.thresholds import Bar, RecordedBar

    relative = RecordedBar.of(Bar(2.0, "max", "times_floor"), 9.61)
    unresolved = RecordedBar.of(Bar(2.0, "max", "times_floor"))
    scores = [
        score("d1", "cnn/ideal/seed0", 10.0, bar=RecordedBar.of(Bar(78.0, "max")).to_dict()),
        score("fid_target", "cnn/ideal/seed0", 25.0, threshold=relative.describe(), bar=relative.to_dict()),
        score("fid_target", "mlp/ideal/seed0", None, threshold=unresolved.describe(), bar=unresolved.to_dict()),
    ]
    frame = load_scores(make_run(tmp_path, "a", "pkg.alpha", scores))
    assert frame["bar"].iloc[0] == 78.0 and frame["bar"].iloc[1] == pytest.approx(19.22)
    assert pd.isna(frame["bar"].iloc[2]) and list(frame["threshold"])[1:] == ["<= 2 × floor = 19.22", "<= 2 × floor"]


def test_direction_comes_from_the_card_and_falls_back_to_the_record(tmp_path):
    run = make_run(
        tmp_path,
        "a",
        "m",
        [
            score("oracle_score:oracle_lenet", "t", 0.5, direction="lower"),
            score("my_metric", "t", 1.0, direction="higher"),
            score("other_metric", "t", 1.0),
        ],
    )
    frame = load_scores(run)
    assert list(frame["direction"]) == ["higher", "higher", "none"]


def test_seed_from_the_task_else_the_runs_only_seed(tmp_path):
    run = make_run(tmp_path, "a", "m", [score("d1", "do_digit/seed2", 1.0), score("d1", "cnn/ideal", 1.0)], seeds=[7])
    assert list(load_scores(run)["seed"]) == [2, 7]
    many = make_run(tmp_path, "b", "m", [score("d1", "cnn/ideal", 1.0)], seeds=[0, 1])
    assert pd.isna(load_scores(many)["seed"].iloc[0])


def test_samples_with_inputs_and_booleans(tmp_path):
    rows = (
        "kind,domain,suite,metric,task,sample,value,input,source,target\n"
        "vce,morpho,validity,target_accuracy,cnn/ideal/seed0,0,True,4,0,9\n"
        "vce,morpho,validity,target_accuracy,cnn/ideal/seed0,1,False,6,0,9\n"
        "vce,morpho,closeness,d1,cnn/ideal/seed0,0,57.5,4,0,9\n"
    )
    run = make_run(tmp_path, "a", "pkg.alpha", [score("d1", "cnn/ideal/seed0", 57.5)], samples=rows)
    frame = load_samples(run)
    assert list(frame.columns) == SAMPLE_COLUMNS and len(frame) == 3
    assert list(frame["value"]) == [1.0, 0.0, 57.5] and list(frame["input"]) == ["4", "6", "4"]
    assert list(frame["sample"]) == [0, 1, 0] and set(frame["method"]) == {"pkg.alpha"}
    assert list(frame["seed"]) == [0, 0, 0]


def test_format_2_samples_have_no_input_and_no_kind(tmp_path):
    rows = "suite,metric,task,sample,value,source,target\nvalidity,tcv,cnn/ideal/seed0,0,0.5,0,1\n"
    run = make_run(tmp_path, "a", "m", [score("tcv", "cnn/ideal/seed0", 0.5)], samples=rows)
    frame = load_samples(run)
    assert frame.iloc[0]["kind"] == "-" and pd.isna(frame.iloc[0]["input"]) and frame.iloc[0]["value"] == 0.5


def test_paths_that_are_not_scorecards_are_clear_errors(tmp_path):
    with pytest.raises(ResultsError, match="no scorecard at .*nowhere: no such file or folder"):
        load_scores(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match="empty is not a cfcheck run folder: it has no scorecard.json"):
        load_scores(tmp_path / "empty")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ResultsError, match="broken.json is not a cfcheck scorecard: not valid JSON"):
        load_scores(tmp_path / "broken.json")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(ResultsError, match="other.json is not a cfcheck scorecard: it has no 'scores' list"):
        load_scores(tmp_path / "other.json")
    run = make_run(tmp_path, "a", "m", [score("d1", "t", 1.0)])
    with pytest.raises(ResultsError, match="has no samples.csv beside its scorecard"):
        load_samples(run)
    (run / "samples.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ResultsError, match="not a cfcheck samples file: no column metric, suite, task, value"):
        load_samples(run)


def test_a_published_run_reads_back_whole():
    run = REPO / "reports" / "published" / "dvce-quick"
    scores, samples = load_scores(run), load_samples(run)
    card = json.loads((run / "scorecard.json").read_text())
    assert len(scores) == len(card["scores"])
    d1 = scores[(scores["metric"] == "d1") & (scores["task"] == "cnn/ideal/seed0")]["value"].item()
    mine = samples[(samples["metric"] == "d1") & (samples["task"] == "cnn/ideal/seed0")]["value"]
    assert d1 == pytest.approx(mine.mean())  # the score is the mean of its per-input values
    assert not samples["metric"].str.startswith(("fid_", "kid_")).any()  # set-level: no per-input rows
