"""Records, scorecards (atomic, valid JSON) and baseline regressions."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cfcheck.baseline import Baseline
from cfcheck.core.records import ScoreRecord
from cfcheck.reporting.scorecard import build_scorecard, load_scorecard, write_scorecard


def _record(metric="target_accuracy", value=0.9, task="cnn/ideal/seed0", **kwargs):
    kwargs.setdefault("kind", "vce")
    kwargs.setdefault("domain", "morpho")
    kwargs.setdefault("sample_labels", {"source": [1, 2, 3], "target": [7, 3, 5]})
    return ScoreRecord(
        nodeid="suites/vce/test_validity.py::x",
        suite="validity",
        metric=metric,
        task=task,
        value=value,
        n=3,
        direction="higher",
        ci_low=0.8,
        ci_high=1.0,
        threshold=">= 0.8",
        verdict="pass",
        samples=[1.0, 1.0, 0.7],
        **kwargs,
    )


def _scorecard(records, status="complete"):
    return build_scorecard(
        records,
        method="demo",
        profile={"name": "quick"},
        status=status,
        seeds=[0],
        device="cpu",
        models={"morpho/cnn": "ab" * 32},
        outcomes={"passed": 1},
        started=datetime.now(timezone.utc),
    )


def test_record_round_trip_keeps_everything_and_nan_becomes_null():
    record = _record(value=math.nan)
    data = record.to_dict()
    assert data["value"] is None
    json.dumps(data)  # strict JSON
    again = ScoreRecord.from_dict(data)
    assert math.isnan(again.value) and again.samples == record.samples and again.key == record.key


def test_a_record_is_strict_json_whatever_its_extra_holds_and_shares_no_list_with_the_dict():
    @dataclass
    class Interval:
        low: float
        high: float

    record = _record(extra={"pair": (1.0, math.inf), "interval": Interval(math.nan, 2.0), "draws": [0.5, math.nan]})
    data = record.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False))["extra"] == {
        "pair": [1.0, None],
        "interval": {"low": None, "high": 2.0},
        "draws": [0.5, None],
    }
    data["samples"].append(0.0)
    data["sample_labels"]["source"].append(9)
    assert record.samples == [1.0, 1.0, 0.7] and record.sample_labels["source"] == [1, 2, 3]
    brief = record.to_dict(with_samples=False)
    assert not {"samples", "sample_labels", "set_features"} & set(brief)
    assert brief == {k: v for k, v in data.items() if k not in ("samples", "sample_labels", "set_features")}


def test_written_scorecard_has_all_files_and_reloads(tmp_path):
    records = [_record(), _record(metric="d2", value=3.0)]
    path = write_scorecard(tmp_path / "run", _scorecard(records), records)
    data = load_scorecard(path.parent)
    assert {s["metric"] for s in data["scores"]} == {"target_accuracy", "d2"}
    assert data["provenance"]["torch_version"]
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert files == ["badge.svg", "samples.csv", "scorecard.html", "scorecard.json", "scorecard.md", "scores.csv"]
    csv_lines = (tmp_path / "run" / "samples.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + 3 * 2 and csv_lines[1].endswith(",1,7")
    assert "| validity | target_accuracy |" in (tmp_path / "run" / "scorecard.md").read_text()


def test_a_failing_write_leaves_the_previous_scorecard_intact(tmp_path, monkeypatch):
    records = [_record()]
    path = write_scorecard(tmp_path, _scorecard(records), records)
    before = path.read_text()

    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cfcheck.reporting.scorecard.json.dumps", explode)
    with pytest.raises(KeyboardInterrupt):
        write_scorecard(tmp_path, _scorecard(records, "incomplete"), records)
    assert path.read_text() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_load_scorecard_errors_name_the_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="x.json is not a cfcheck scorecard: not valid JSON"):
        load_scorecard(bad)
    bad.write_text("[]")
    with pytest.raises(ValueError, match="not a cfcheck scorecard"):
        load_scorecard(bad)
    with pytest.raises(FileNotFoundError, match="no cfcheck scorecard"):
        load_scorecard(tmp_path / "missing.json")


def test_baseline_from_a_scorecard(tmp_path):
    records = [_record(value=0.9), _record(value=0.2, kind="scm", task="do_digit/seed0")]
    path = write_scorecard(tmp_path, _scorecard(records), records)
    baseline = Baseline.load(path)
    key = "vce/morpho/validity/target_accuracy[cnn/ideal/seed0]"
    assert records[0].key == key
    assert baseline.get(key) == 0.9 and baseline.get("scm/morpho/validity/target_accuracy[do_digit/seed0]") == 0.2
    assert baseline.compare((key,), 0.8, "higher", 0.05) is not None
    assert baseline.compare((key,), 0.87, "higher", 0.05) is None
    assert baseline.compare(("unknown[x]",), 0.0, "higher", 0.0) is None


def test_a_format_2_baseline_still_gates_by_metric_and_task(tmp_path):
    old = {
        "format": 2,
        "scores": [{"suite": "validity", "metric": "target_accuracy", "task": "cnn/ideal/seed0", "value": 0.9}],
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    baseline = Baseline.load(tmp_path / "old.json")
    record = _record(value=0.5)
    assert baseline.get(record.key, record.legacy_key) == 0.9
    assert baseline.compare((record.key, record.legacy_key), 0.5, "higher", 0.05) is not None


def test_per_sample_csv_columns_are_the_tasks_own_labels(tmp_path):
    records = [
        _record(),
        _record(
            kind="scm",
            task="do_thickness/seed0",
            sample_labels={"observed": [2.1, 3.0, 1.9], "intervened": [4.0, 1.2, 2.8]},
        ),
    ]
    write_scorecard(tmp_path, _scorecard(records), records)
    lines = (tmp_path / "samples.csv").read_text().splitlines()
    assert lines[0] == "kind,domain,suite,metric,task,sample,value,observed,intervened,source,target"
    assert lines[1] == "scm,morpho,validity,target_accuracy,do_thickness/seed0,0,1.0,2.1,4.0,,"
    assert lines[4] == "vce,morpho,validity,target_accuracy,cnn/ideal/seed0,0,1.0,,,1,7"


@given(
    stored=st.floats(-100, 100, allow_nan=False),
    value=st.floats(-100, 100, allow_nan=False),
    tolerance=st.floats(0, 10, allow_nan=False),
)
def test_regression_is_direction_aware(stored, value, tolerance):
    baseline = Baseline({"m[t]": stored})
    higher = baseline.compare(("m[t]",), value, "higher", tolerance)
    lower = baseline.compare(("m[t]",), value, "lower", tolerance)
    assert (higher is not None) == (stored - value > tolerance)
    assert (lower is not None) == (value - stored > tolerance)
    assert not (higher and lower)
    assert baseline.compare(("m[t]",), value, "none", tolerance) is None
