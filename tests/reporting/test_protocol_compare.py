"""Protocols on the pages and in `cfcheck compare` (issue 43): a scorecard's Markdown, HTML and badge
name each protocol with its version and digest; compare refuses runs of different or unknown
protocols naming the runs, the protocol and what differs, and with --allow marks every affected row."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from cfcheck.cli import main
from cfcheck.core.records import ScoreRecord
from cfcheck.reporting.badge import render_badge
from cfcheck.reporting.compare import CompareError, compare_runs, load_run
from cfcheck.reporting.compare_render import render_html, render_markdown
from cfcheck.reporting.compare_tables import PROTOCOL_MARK
from cfcheck.reporting.html import render_html as scorecard_html
from cfcheck.reporting.markdown import render_markdown as scorecard_markdown
from cfcheck.reporting.scorecard import build_scorecard
from tests.reporting.test_compare import HIT, same_protocols, write_run

SCM = ("scm", "morpho", "effectiveness", "effectiveness_accuracy", "do_thickness/seed0")


def _entry(key: str, *, digest: str = "f" * 64, version: str = "v1", **changed) -> dict:
    """A scorecard's protocol entry; each field in ``changed`` replaces the default and moves its part."""
    kind, domain, profile = key.split("/")
    parts = dict.fromkeys(("tasks", "metrics", "bars", "reference_models", "domain"), "0" * 64)
    parts.update({field.removesuffix("_identity"): "1" * 64 for field in changed})
    entry = {"kind": kind, "domain": domain, "profile": profile, "version": version, "digest": digest, "parts": parts}
    entry.update(
        {
            "tasks": {"revision": 1, "seeds": [0], "sizes": {"n_per_source": 12}},
            "metrics": {"target_accuracy": "a" * 12, "d1": "b" * 12},
            "bars_source": "cards",
            "bars": {"target_accuracy": ">= 0.75", "d1": "<= 78"},
            "reference_models": {"cnn": "c" * 16},
        }
    )
    entry.update(changed)
    return entry


SAMPLES = {HIT: dict.fromkeys(range(20), 1.0), SCM: dict.fromkeys(range(20), 0.5)}


def _runs(tmp_path, second_vce: dict | None, *, first_protocols: dict | None = None):
    """Two runs scoring a vce and an scm key; the scm protocol is the same, the vce one as given."""
    same = same_protocols(SAMPLES, "quick")
    first = first_protocols if first_protocols is not None else {**same, "vce/morpho/quick": _entry("vce/morpho/quick")}
    second = {**same, **({"vce/morpho/quick": second_vce} if second_vce is not None else {})}
    if second_vce is None:
        second.pop("vce/morpho/quick")
    a = write_run(tmp_path, "a", "alpha", SAMPLES, protocols=first)
    b = write_run(tmp_path, "b", "beta", SAMPLES, protocols=second)
    return a, b


def test_runs_of_different_protocols_are_refused_naming_runs_protocol_and_what_differs(tmp_path):
    recalibrated = _entry(
        "vce/morpho/quick", digest="e" * 64, version="v2", bars={"target_accuracy": ">= 0.75", "d1": "<= 80"}
    )
    a, b = _runs(tmp_path, recalibrated)
    with pytest.raises(CompareError) as error:
        compare_runs([load_run(a), load_run(b)])
    message = str(error.value)
    assert "cannot compare runs of different protocols (--allow compares them, marking the rows)" in message
    assert f"protocol vce/morpho/quick: alpha ({a}) has vce/morpho/quick v1 (ffffffffffff)" in message
    assert f"beta ({b}) has vce/morpho/quick v2 (eeeeeeeeeeee); differs in bars (d1: <= 78 → <= 80)" in message
    assert "scm/morpho" not in message  # its protocol is the same in both runs


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"metrics": {"target_accuracy": "a" * 12, "d1": "d" * 12}}, "metrics (card definitions: d1)"),
        (
            {"tasks": {"revision": 1, "seeds": [0], "sizes": {"n_per_source": 40}}},
            "tasks (sizes.n_per_source: 12 → 40)",
        ),
        ({"reference_models": {"cnn": "9" * 16}}, f"reference_models (cnn: {'c' * 16} → {'9' * 16})"),
        ({"domain_identity": {"data_revision": 2}}, "differs in domain"),
    ],
)
def test_the_refusal_says_which_part_differs(tmp_path, change, said):
    a, b = _runs(tmp_path, _entry("vce/morpho/quick", digest="e" * 64, **change))
    with pytest.raises(CompareError, match=re.escape(said)):
        compare_runs([load_run(a), load_run(b)])


def test_allow_compares_them_and_marks_every_affected_row_only(tmp_path, capsys):
    a, b = _runs(
        tmp_path, _entry("vce/morpho/quick", digest="e" * 64, bars={"target_accuracy": ">= 0.8", "d1": "<= 78"})
    )
    comparison = compare_runs([load_run(a), load_run(b)], allow=True)
    assert list(comparison.protocol_notes) == [("vce", "morpho")]
    markdown = render_markdown(comparison)
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| method |")]
    vce_rows = [row for row in rows if "target_accuracy" in row]
    scm_rows = [row for row in rows if "effectiveness_accuracy" in row]
    assert len(vce_rows) == 2 and all(PROTOCOL_MARK in row for row in vce_rows)  # its score's row, its paired test's
    assert len(scm_rows) == 2 and not any(PROTOCOL_MARK in row for row in scm_rows)
    # "behind the best": the column of the suite
    assert f"| method | scm/morpho/effectiveness | vce/morpho/validity {PROTOCOL_MARK} |" in markdown
    assert f"## vce / morpho / validity {PROTOCOL_MARK}" in markdown
    assert f"### vce / morpho / validity {PROTOCOL_MARK}" in markdown  # its leaderboard
    assert (
        f"- {PROTOCOL_MARK} (compared with --allow; every row of these scores is marked): protocol vce/morpho/quick"
        in markdown
    )
    assert "bars (target_accuracy: &gt;= 0.75 → &gt;= 0.8)" in render_html(comparison)

    assert main(["compare", str(a), str(b)]) == 2
    assert "cannot compare runs of different protocols" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--allow"]) == 0
    assert PROTOCOL_MARK in capsys.readouterr().out


def test_a_scorecard_without_protocols_is_an_unknown_protocol(tmp_path):
    a, b = _runs(tmp_path, _entry("vce/morpho/quick"))
    old = write_run(tmp_path, "old", "gamma", SAMPLES, protocols={})
    with pytest.raises(CompareError) as error:
        compare_runs([load_run(a), load_run(old)])
    message = str(error.value)
    assert (
        f"protocol vce/morpho/quick: unknown protocol (a scorecard written before cfcheck recorded protocols) in gamma ({old})"
        in message
    )
    assert "protocol scm/morpho/quick: unknown protocol" in message
    comparison = compare_runs([load_run(a), load_run(b), load_run(old)], allow=True)
    assert set(comparison.protocol_notes) == {("vce", "morpho"), ("scm", "morpho")}
    assert compare_runs([load_run(a), load_run(b)]).protocol_notes == {}  # the same protocols: nothing marked


def _scorecard(protocols: dict) -> dict:
    record = ScoreRecord(
        "t::x", "validity", "target_accuracy", "cnn/ideal/seed0", 0.9, 10, "higher", kind="vce", domain="morpho"
    )
    return build_scorecard(
        [record],
        method="m",
        profile={"name": "quick"},
        status="complete",
        seeds=[0],
        device="cpu",
        models={},
        outcomes={"passed": 1},
        started=datetime.now(timezone.utc),
        protocols=protocols,
    )


def test_the_scorecard_its_pages_and_its_badge_name_the_protocol():
    registered = _entry("vce/morpho/quick", digest="1234567890ab" + "c" * 52)
    unregistered = _entry("scm/morpho/quick", digest="fedcba987654" + "0" * 52, version="unregistered, fedcba987654")
    scorecard = json.loads(json.dumps(_scorecard({"vce/morpho/quick": registered, "scm/morpho/quick": unregistered})))
    assert scorecard["protocols"]["vce/morpho/quick"]["version"] == "v1"
    markdown = scorecard_markdown(scorecard)
    assert "- protocol vce/morpho/quick v1 (1234567890ab)" in markdown
    assert "- protocol scm/morpho/quick unregistered, fedcba987654" in markdown
    assert "- vce/morpho/quick v1 (1234567890ab): tasks `000000000000`, metrics `000000000000`" in markdown
    page = scorecard_html(scorecard)
    assert "<p class='muted protocol'>protocol vce/morpho/quick v1 (1234567890ab)</p>" in page
    title = re.search(r"<title>(.*?)</title>", render_badge(scorecard)).group(1)
    assert title.endswith(
        " · protocol scm/morpho/quick unregistered, fedcba987654; vce/morpho/quick v1 (1234567890ab)"
    ) and title.startswith("cfcheck: ")


def test_a_scorecard_without_protocols_renders_as_before():
    scorecard = _scorecard({})
    assert scorecard["protocols"] == {}
    markdown = scorecard_markdown(scorecard)
    assert "- protocol " not in markdown and "Protocols (sha256" not in markdown
    assert "· protocol" not in render_badge(scorecard)
