"""Report formats are plugins (``pytest_cfcheck_scorecard``) and the scorecard JSON and provenance can be
extended (``pytest_cfcheck_update_json``, ``pytest_cfcheck_update_provenance``): through a real run of a
method whose conftest implements them (pytester), and through ``cfcheck render``."""

from __future__ import annotations

import json

import pytest

from cfcheck.cli import main as cfcheck
from cfcheck.reporting.badge import badge_state

SETTINGS = """
[tool.cfcheck]
n_per_source = 2
classifiers = ["cnn"]
pair_sets = ["ideal"]
bootstrap_resamples = 50
seeds = 1
"""
#: one task of one kind: a fast run that writes a scorecard
ONE_TASK = ("-p", "no:randomly", "-k", "vce and test_ground_truth and not relative and not perceptual")

METHOD = """
import pytest

class Blend:
    def explain(self, x, target, classifier):
        return (x * 0.7 + 0.15).clone()

@pytest.fixture(scope="session")
def cf_method():
    return Blend()
"""

# a user's format (a CSV of the verdicts) and additions to the JSON and the provenance
CONFTEST = """
def pytest_cfcheck_scorecard(scorecard, run_dir):
    lines = ["kind,domain,suite,metric,task,verdict"]
    lines += [f"{s.kind},{s.domain},{s.suite},{s.metric},{s.task},{s.verdict}" for s in scorecard.scores]
    lines.append(f"# {scorecard.headline.word} {len(scorecard.sections)} sections")
    path = run_dir / "verdicts.csv"
    path.write_text("\\n".join(lines) + "\\n")
    return path

def pytest_cfcheck_update_json(config, scorecard_json):
    scorecard_json["team"] = {"name": "explainers", "scores_seen": len(scorecard_json["scores"])}

def pytest_cfcheck_update_provenance(config, provenance):
    provenance["cluster"] = "lab-7"
"""

FAILING_FORMAT = """
def pytest_cfcheck_scorecard(scorecard, run_dir):
    raise RuntimeError("the plotting server is down")
"""

BUNDLED_FILES = ("scorecard.json", "scorecard.md", "scorecard.html", "badge.svg", "scores.csv")


@pytest.fixture
def run(pytester):
    """A run of the blending method on one task, with ``conftest`` as its conftest.py; returns the result
    and the run folder."""
    pytester.makepyprojecttoml(SETTINGS)
    pytester.syspathinsert()
    pytester.makepyfile(blend=METHOD)

    def go(conftest: str | None, *extra: str):
        if conftest is not None:
            pytester.makeconftest(conftest)
        result = pytester.runpytest("--method=blend", *ONE_TASK, *extra)
        return result, pytester.path / "reports" / "blend-standard"

    return go


def test_a_conftest_adds_a_format_and_fields_to_the_json_and_the_provenance(run):
    result, run_dir = run(CONFTEST)
    result.assert_outcomes(passed=1)
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["team"] == {"name": "explainers", "scores_seen": len(card["scores"])} and card["scores"]
    assert card["provenance"]["cluster"] == "lab-7"
    assert "<th>cluster</th><td>lab-7</td>" in (run_dir / "scorecard.html").read_text()  # drawn from the JSON
    rows = (run_dir / "verdicts.csv").read_text().splitlines()
    assert rows[0] == "kind,domain,suite,metric,task,verdict"
    expected = {
        f"{s['kind']},{s['domain']},{s['suite']},{s['metric']},{s['task']},{s['verdict']}" for s in card["scores"]
    }
    assert set(rows[1:-1]) == expected and len(rows) == len(card["scores"]) + 2
    headline = (run_dir / "scorecard.md").read_text().split("**", 2)[1]  # the Markdown's headline word
    assert rows[-1] == f"# {headline} 1 sections"
    assert all((run_dir / name).is_file() for name in BUNDLED_FILES)


def test_a_failing_format_is_named_and_the_other_formats_are_written(run):
    result, run_dir = run(FAILING_FORMAT)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK  # the exit status is the scores' (the pages say PASS)
    result.stdout.fnmatch_lines(
        ["*ERROR: report format *conftest.py failed: RuntimeError: the plotting server is down*"]
    )
    for name in BUNDLED_FILES:
        assert (run_dir / name).is_file(), name
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert f'aria-label="cfcheck: {badge_state(card)[0]}"' in (run_dir / "badge.svg").read_text()


def test_a_bundled_format_can_be_left_out_by_its_plugin_name(run):
    _, run_dir = run(None, "-p", "no:cfcheck-format-html")
    assert (run_dir / "scorecard.md").is_file() and (run_dir / "badge.svg").is_file()
    assert not (run_dir / "scorecard.html").exists()


def test_cfcheck_render_redraws_every_format_from_the_json_alone(run, tmp_path, capsys):
    _, run_dir = run(None)
    drawn = {name: (run_dir / name).read_text() for name in BUNDLED_FILES[1:]}
    for name in drawn:
        (run_dir / name).unlink()
    plugin = tmp_path / "my_format.py"
    plugin.write_text(CONFTEST)
    capsys.readouterr()  # (the run's own output)
    assert cfcheck(["render", str(run_dir), "-p", str(plugin)]) == 0
    printed = capsys.readouterr().out.split()
    assert {name: (run_dir / name).read_text() for name in drawn} == drawn  # the same pages as the run's
    assert sorted(printed) == sorted(str(run_dir / name) for name in [*drawn, "verdicts.csv"])
    failing = tmp_path / "failing.py"
    failing.write_text(FAILING_FORMAT)
    (run_dir / "badge.svg").unlink()
    assert cfcheck(["render", str(run_dir), "-p", str(failing)]) == 1
    assert "RuntimeError: the plotting server is down" in capsys.readouterr().err
    assert (run_dir / "badge.svg").read_text() == drawn["badge.svg"]  # the others were still written


def test_merged_shards_record_the_calibration_the_unsharded_run_records(run, pytester):
    """Each shard records the controls' values of its own scores; the merge joins them (looking no domain
    up) into what the unsharded run records."""
    pytester.makepyprojecttoml(SETTINGS.replace("seeds = 1", "seeds = 2"))
    quick = ("--cfcheck-profile=quick", "-k", "vce and test_ground_truth and not perceptual")
    for shard in ((), ("--cfcheck-shard=1/2",), ("--cfcheck-shard=2/2",)):
        run(None, *quick, *shard)
    reports = pytester.path / "reports"
    shards = [reports / "blend-quick-shard1of2", reports / "blend-quick-shard2of2"]
    parts = [json.loads((shard / "scorecard.json").read_text())["calibration"] for shard in shards]
    assert all(part["vce/morpho"]["controls"] for part in parts)  # each shard recorded markers of its own
    assert cfcheck(["merge", *map(str, shards), "--output", str(reports / "merged")]) == 0
    merged = json.loads((reports / "merged" / "scorecard.json").read_text())["calibration"]
    whole = json.loads((reports / "blend-quick" / "scorecard.json").read_text())["calibration"]
    assert merged == whole and len(whole["vce/morpho"]["controls"]) > len(parts[0]["vce/morpho"]["controls"])
