"""``scores.csv``, the flat table of a scorecard's scores (:mod:`cfcheck.reporting.scores_csv`): read
back with the standard ``csv`` module and compared with the scorecard JSON read on its own (every
published run, and generated scores with awkward text)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.reporting.model import Scorecard
from cfcheck.reporting.scores_csv import COLUMNS, render_scores_csv

PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "published"
RUNS = sorted(path.parent.name for path in PUBLISHED.glob("*/scorecard.json"))


def _read(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == COLUMNS
    return list(reader)


def _number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def _same(cell: str, expected: object) -> bool:
    if expected is None:
        return cell == ""
    if isinstance(expected, float):
        found = _number(cell)
        return found is not None and (found == expected or (math.isnan(found) and math.isnan(expected)))
    return cell == str(expected)


@pytest.mark.parametrize("run", RUNS)
def test_every_published_score_is_one_row_with_its_value_bar_verdict_and_protocol(run):
    data = json.loads((PUBLISHED / run / "scorecard.json").read_text())
    rows = _read(render_scores_csv(Scorecard.from_json(data)))
    assert len(rows) == len(data["scores"]) > 0
    profile = data["profile"]["name"]
    for row, score in zip(rows, data["scores"], strict=True):
        for column in ("kind", "domain", "suite", "metric", "task", "verdict", "direction"):
            assert _same(row[column], score[column]), (column, row, score)
        for column in ("value", "ci_low", "ci_high"):
            assert _same(row[column], score[column]), (column, row[column], score[column])
        assert row["threshold"] == (score["threshold"] or "")
        bar = score.get("bar")
        if bar is None:
            assert row["bar_kind"] == row["bar_value"] == ""
        else:
            assert row["bar_kind"] == bar["kind"] and float(row["bar_bound"]) == bar["bound"]
            assert _same(row["bar_value"], bar["value"]) and _same(row["bar_floor"], bar["floor"])
        entry = data["protocols"][f"{score['kind']}/{score['domain']}/{profile}"]
        assert row["protocol"].startswith(f"{score['kind']}/{score['domain']}/{profile} {entry['version']} (")
        assert entry["digest"].startswith(row["protocol"].split("(")[1].rstrip(")"))


TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"), max_size=30)
NUMBER = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"kind": TEXT, "metric": TEXT, "task": TEXT, "reason": TEXT, "value": NUMBER, "ci_low": NUMBER, "n": NUMBER}
        ),
        max_size=6,
    )
)
def test_any_text_and_number_survives_the_round_trip(scores):
    rows = _read(render_scores_csv(Scorecard.from_json({"scores": scores})))
    assert len(rows) == len(scores)
    for row, score in zip(rows, scores, strict=True):
        assert row["kind"] == score["kind"] and row["metric"] == score["metric"]
        assert row["task"] == score["task"] and row["reason"] == score["reason"]
        assert _same(row["value"], score["value"]) and _same(row["ci_low"], score["ci_low"])
        assert _same(row["n"], score["n"])
        assert row["bar_kind"] == row["protocol"] == row["regressed"] == ""
