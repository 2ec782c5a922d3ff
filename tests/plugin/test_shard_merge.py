"""Sharding a run and merging the shards gives the scores of the unsharded run."""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cfcheck.cli import main as cfcheck
from cfcheck.core.sharding import Shard, assign_groups

ADAPTER = """
import pytest

class Blend:
    def explain(self, x, target, classifier, generator=None):
        return (x * 0.7 + 0.15).clone()

@pytest.fixture
def cf_method() -> Blend:
    return Blend()
"""
SELECTION = ("-p", "no:randomly", "-k", "vce and (test_validity or test_closeness or test_contract)")


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.integers(1, 50), max_size=12), st.integers(1, 5))
def test_assignment_is_deterministic_complete_and_balanced(sizes, count):
    assignment = assign_groups(sizes, count)
    assert assignment == assign_groups(dict(reversed(list(sizes.items()))), count)  # order-free
    assert set(assignment) == set(sizes) and set(assignment.values()) <= set(range(1, count + 1))
    loads = [sum(sizes[g] for g, s in assignment.items() if s == shard) for shard in range(1, count + 1)]
    if sizes:  # greedy largest-first: the spread is at most the largest group
        assert max(loads) - min(loads) <= max(sizes.values())


@pytest.mark.parametrize(
    ("text", "message"), [("3/2", "between 1 and N"), ("1-2", "expects I/N"), ("0/0", "between 1 and N")]
)
def test_bad_shard_specs_are_named(text, message):
    with pytest.raises(ValueError, match=message):
        Shard.parse(text)


def _scores(path):
    card = json.loads((path / "scorecard.json").read_text())
    return {
        (s["kind"], s["suite"], s["metric"], s["task"]): (s["value"], s["ci_low"], s["ci_high"], s["n"], s["verdict"])
        for s in card["scores"]
    }


def _rows(path):
    with (path / "samples.csv").open() as handle:
        return sorted(tuple(sorted(row.items())) for row in csv.DictReader(handle))


def test_two_shards_merge_into_the_unsharded_scorecard(tiny, tiny_settings):
    tiny.makepyprojecttoml(tiny_settings.replace("seeds = 1", "seeds = 2"))
    tiny.makepyfile(blend=ADAPTER)
    whole = tiny.runpytest("--method=blend", *SELECTION)
    first = tiny.runpytest("--method=blend", "--cfcheck-shard=1/2", *SELECTION)
    second = tiny.runpytest("--method=blend", "--cfcheck-shard=2/2", *SELECTION)
    ran = [sum(r.parseoutcomes().get(k, 0) for k in ("passed", "failed")) for r in (whole, first, second)]
    assert ran[1] > 0 and ran[2] > 0 and ran[1] + ran[2] == ran[0]  # a partition of the tests
    reports = tiny.path / "reports"
    shards = [reports / "blend-standard-shard1of2", reports / "blend-standard-shard2of2"]
    assert cfcheck(["merge", *map(str, shards), "--output", str(reports / "merged")]) == 0
    assert _scores(reports / "merged") == _scores(reports / "blend-standard")
    assert _rows(reports / "merged") == _rows(reports / "blend-standard")
    merged = json.loads((reports / "merged" / "scorecard.json").read_text())
    assert merged["status"] == "complete" and merged["profile"]["merged_shards"] == 2
    assert merged["provenance"]["devices"] == {"shard 1/2 main": "cpu", "shard 2/2 main": "cpu"}
    generation = merged["provenance"]["generation"]
    assert generation["tasks_generated"] + generation["tasks_from_cache"] == 2  # each task in one shard only
    assert len(list((reports / "merged" / "examples").glob("*.json"))) == 2


def test_merge_refuses_a_missing_shard_and_mixed_runs(tiny, tiny_settings, capsys):
    tiny.makepyfile(blend=ADAPTER)
    tiny.runpytest("--method=blend", "--cfcheck-shard=1/2", *SELECTION)
    reports = tiny.path / "reports"
    assert cfcheck(["merge", str(reports / "blend-standard-shard1of2"), "--output", str(reports / "m")]) == 2
    assert "shard 2/2 is missing" in capsys.readouterr().err
    tiny.runpytest("--method=blend", "--cfcheck-shard=2/2", "--cfcheck-profile=quick", *SELECTION)
    code = cfcheck(
        [
            "merge",
            str(reports / "blend-standard-shard1of2"),
            str(reports / "blend-quick-shard2of2"),
            "--output",
            str(reports / "m"),
        ]
    )
    assert code == 2 and "differ in profile ('standard' vs 'quick')" in capsys.readouterr().err


def test_a_bad_shard_option_is_a_usage_error(tiny):
    tiny.makepyfile(blend=ADAPTER)
    result = tiny.runpytest("--method=blend", "--cfcheck-shard=3/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--cfcheck-shard 3/2: I must be between 1 and N*"])
