"""A tiny run's protocol, and a baseline made under another one (issue 43): the scorecard records the
run's protocol; against a baseline whose bars differ, the run names each changed bar (old → new) and the
parts that differ, and a failure across a changed bar is a new failure, not a known one."""

from __future__ import annotations

import json

import pytest

from tests.plugin.test_baseline_gate import IDENTITY, SELECTION


@pytest.fixture
def identity(tiny):
    tiny.makepyfile(identity=IDENTITY)
    return tiny


def test_a_baseline_judged_by_other_bars_says_which_changed_and_gates_honestly(identity):
    saved = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-save-baseline=base.json")
    assert saved.ret == pytest.ExitCode.TESTS_FAILED  # the identity misses target accuracy
    run_dir = identity.path / "reports" / "identity-standard"
    scorecard = json.loads((run_dir / "scorecard.json").read_text())
    (entry,) = scorecard["protocols"].values()
    assert (entry["kind"], entry["domain"], entry["profile"]) == ("vce", "morpho", "standard")
    # the tiny settings change the sizes: a protocol of the user's, not a registered one
    assert entry["version"] == f"unregistered, {entry['digest'][:12]}"
    assert (
        f"- protocol vce/morpho/standard unregistered, {entry['digest'][:12]}" in (run_dir / "scorecard.md").read_text()
    )

    stored = json.loads((identity.path / "base.json").read_text())
    (accuracy,) = [s for s in stored["scores"] if s["metric"] == "target_accuracy"]
    now = accuracy["threshold"]
    accuracy["threshold"] = ">= 0.5"  # the bar it was judged by then
    stored["protocols"]["vce/morpho/standard"]["bars"]["target_accuracy"] = ">= 0.5"
    stored["protocols"]["vce/morpho/standard"]["parts"]["bars"] = "0" * 64
    stored["protocols"]["vce/morpho/standard"].update(digest="0" * 64, version="unregistered, 000000000000")
    (identity.path / "base.json").write_text(json.dumps(stored))

    again = identity.runpytest("--method=identity", *SELECTION, "--cfcheck-baseline=base.json")
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    again.assert_outcomes(passed=2, failed=1)  # with the same bar it would be a known failure (xfailed)
    again.stdout.fnmatch_lines(
        [
            "against the baseline base.json: 0 known failures (xfailed), 1 new failures, *",
            "  protocol vce/morpho/standard differs from the baseline's (vce/morpho/standard unregistered, "
            f"000000000000 → *): bars (target_accuracy: >= 0.5 → {now})",
            f"  bar of target_accuracy on vce/morpho changed since the baseline: >= 0.5 → {now} (1 score; *",
        ]
    )
    again.stdout.fnmatch_lines([f"*new failure (the baseline had 0*, fail under the bar >= 0.5, now {now}): *"])
    section = json.loads((run_dir / "scorecard.json").read_text())["baseline"]
    assert section["bar_changes"] == [
        f"bar of target_accuracy on vce/morpho changed since the baseline: >= 0.5 → {now} (1 score; no known "
        "failure carries across it)"
    ]
    assert len(section["protocol_changes"]) == 1
