"""The Markdown and HTML scorecards and the badge, by construction: known verdict counts give
known headlines, matrix cells, summary rows and badges; hostile strings stay text; the HTML
page needs nothing from the network."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cfcheck.reporting.badge import COLOURS, badge_state, render_badge
from cfcheck.reporting.examples import write_example_grid
from cfcheck.reporting.html import render_html
from cfcheck.reporting.markdown import render_markdown
from cfcheck.reporting.model import headline
from cfcheck.reporting.scorecard import load_scorecard, write_scorecard


def _score(suite, task, verdict, metric="target_accuracy", kind="vce", **extra):
    value = extra.pop("value", 0.9 if verdict == "pass" else 0.3)
    return {
        "kind": kind,
        "domain": "morpho",
        "suite": suite,
        "metric": metric,
        "task": task,
        "value": value,
        "ci_low": value - 0.05,
        "ci_high": value + 0.05,
        "n": 12,
        "direction": "higher",
        "threshold": extra.pop("threshold", None if verdict is None else ">= 0.8"),
        "verdict": verdict,
        "reason": extra.pop("reason", None),
        "regressed": extra.pop("regressed", None),
        "extra": extra.pop("extra", {}),
        **({"bar": extra.pop("bar")} if "bar" in extra else {}),
    }


def _card(scores, status="complete", method="demo"):
    return {
        "format": 3,
        "status": status,
        "method": method,
        "profile": {"name": "quick"},
        "outcomes": {"passed": 3, "failed": 2},
        "provenance": {
            "cfcheck_version": "0.1.0",
            "cfcheck_commit": None,
            "finished": "2026-01-01T00:00:00+00:00",
            "seeds": [0],
            "reference_models": {"morpho/cnn": "ab" * 32},
            "generation": {"generated": 7},
        },
        "costs": {},
        "scores": scores,
    }


def _known():
    """vce/validity: 3 pass, 2 fail, 1 inconclusive; vce/closeness: 4 pass, 1 without a bar;
    scm/validity: 1 error, 1 pass. Two of three suites fail."""
    return [
        _score("validity", "cnn/ideal/seed0", "pass"),
        _score("validity", "cnn/other/seed0", "pass"),
        _score("validity", "cnn/ideal/seed0", "fail", metric="tcv"),
        _score("validity", "cnn/other/seed0", "fail", metric="tcv"),
        _score("validity", "mlp/ideal/seed0", "pass"),
        _score("validity", "mlp/ideal/seed0", "inconclusive", metric="tcv"),
        *(
            _score("closeness", t, "pass", metric="d2")
            for t in ("cnn/ideal/seed0", "cnn/other/seed0", "mlp/ideal/seed0")
        ),
        _score("closeness", "mlp/other/seed0", "pass", metric="d2"),
        _score("closeness", "cnn/ideal/seed0", None, metric="coverage"),
        _score("validity", "do_digit/seed0", "error", kind="scm", reason="method raised"),
        _score("validity", "do_digit/seed0", "pass", kind="scm", metric="tcv"),
    ]


class _Tables(HTMLParser):
    """Rows of every table (cell texts) by the table's class, and every src/href attribute."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.links, self.tags, self._current, self._cell = {}, [], [], None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.links += [(tag, name, attrs[name]) for name in ("src", "href") if name in attrs]
        if tag == "table":
            self._current = self.tables.setdefault(attrs.get("class", ""), [])
        elif tag == "tr" and self._current is not None:
            self._current.append([])
        elif tag in ("td", "th") and self._current is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._current:
            self._current[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._current = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_headline_counts_and_matrix_follow_the_verdicts():
    card = _card(_known())
    assert headline(card) == ("FAIL", "FAIL: 2 of 3 suites have failing scores")
    page = render_html(card)
    assert "FAIL: 2 of 3 suites have failing scores" in page
    assert _Tables(page).tables["counts"] == [  # pass, fail, inconclusive, error, no bar
        ["", "pass", "fail", "inconclusive", "error", "no bar"],
        ["vce (all suites)", "7", "2", "1", "0", "1"],
        ["validity", "3", "2", "1", "0", "0"],
        ["closeness", "4", "0", "0", "0", "1"],
        ["scm (all suites)", "1", "0", "0", "1", "0"],
        ["validity", "1", "0", "0", "1", "0"],
    ]
    rows = _Tables(page).tables["matrix"]  # vce's matrix, then scm's
    assert rows[0] == ["task", "validity", "closeness"] and rows[-2:] == [
        ["task", "validity"],
        ["do_digit/seed0", "1 ✓1 !"],
    ]
    matrix = {row[0]: row[1:] for row in rows[1:-2]}
    assert matrix == {
        "cnn/ideal/seed0": ["1 ✓1 ✗", "1 ✓1 –"],
        "cnn/other/seed0": ["1 ✓1 ✗", "1 ✓"],
        "mlp/ideal/seed0": ["1 ✓1 ?", "1 ✓"],
        "mlp/other/seed0": ["·", "1 ✓"],
    }
    assert re.search(r"data-verdict='fail'[^>]*>.*?1 ✓.*?1 ✗", page)
    failures = _Tables(page).tables["failures"]
    assert [row[:3] for row in failures[1:]] == [
        ["vce/validity", "tcv", "2/3"],
        ["scm/validity", "target_accuracy", "1/1"],
    ]


def test_headline_of_a_passing_and_of_an_incomplete_run():
    passing = _card([_score("validity", "cnn/ideal/seed0", "pass"), _score("validity", "cnn/x/seed0", "inconclusive")])
    assert headline(passing)[1] == "PASS: no score fails (1 pass, 1 inconclusive)"
    assert headline(_card(_known(), status="incomplete"))[0] == "INCOMPLETE"


def test_an_inconclusive_score_that_fails_the_run_fails_the_page_too():
    """Under ``inconclusive = "fail"`` (the default) the run exits 1 on an inconclusive score: the
    headline, the badge and the failing list say so too, where under "xfail" or "pass" they pass."""
    failing = _score("validity", "cnn/x/seed0", "inconclusive")
    failing["inconclusive_fails"] = True
    card = _card([_score("validity", "cnn/ideal/seed0", "pass"), failing])
    assert headline(card) == ("FAIL", "FAIL: 1 of 1 suites have failing scores")
    assert badge_state(card) == ("fail 1", COLOURS["fail"])
    assert "cnn/x/seed0" in render_markdown(card).split("Failing scores", 1)[1]
    tolerated = _card(
        [_score("validity", "cnn/ideal/seed0", "pass"), _score("validity", "cnn/x/seed0", "inconclusive")]
    )
    assert badge_state(tolerated) == ("pass", COLOURS["pass"])


def test_badge_text_and_colour():
    assert badge_state(_card([_score("validity", "t/a/s", "pass")])) == ("pass", COLOURS["pass"])
    three = [
        _score("validity", "t/a/s", "fail"),
        _score("validity", "t/b/s", "error"),
        _score("validity", "t/c/s", "pass", regressed=True),
        _score("validity", "t/d/s", "inconclusive"),
    ]
    assert badge_state(_card(three)) == ("fail 3", COLOURS["fail"])
    assert badge_state(_card(three, status="incomplete")) == ("incomplete", COLOURS["incomplete"])
    svg = render_badge(_card(three))
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg") and "cfcheck: fail 3" in svg and COLOURS["fail"] in svg
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", "")


def test_a_kind_without_bars_is_reported_never_passed():
    attribution = [
        _score("road", "cnn/seed0/removal", None, metric=f"road_area:{o}", kind="attribution") for o in ("morf", "lerf")
    ]
    alone = _card(attribution)
    assert headline(alone) == ("REPORTED", "REPORTED: no bars: reported only (2 scores without a verdict)")
    assert badge_state(alone) == ("reported only", COLOURS["reported"])
    # mixed with a judged kind: the banner and the badge say which kind was judged and which only reported
    mixed = _card([_score("validity", "cnn/ideal/seed0", "pass"), *attribution])
    assert headline(mixed) == (
        "PASS",
        "PASS: no score fails (1 pass); judged: vce; no bars, reported only: attribution (2 scores)",
    )
    assert badge_state(mixed) == ("vce pass · attribution reported", COLOURS["pass"])
    assert "judged: vce; no bars, reported only: attribution (2 scores)" in render_html(mixed)
    assert "reported only: attribution" in render_markdown(mixed)
    failing = _card([_score("validity", "cnn/ideal/seed0", "fail"), *attribution])
    assert headline(failing)[1] == (
        "FAIL: 1 of 2 suites have failing scores; judged: vce; no bars, reported only: attribution (2 scores)"
    )
    assert badge_state(failing) == ("fail 1", COLOURS["fail"])
    # a kind with one score under a bar is judged, even if its other scores have none
    judged = _card(
        [
            _score("validity", "cnn/ideal/seed0", "pass"),
            *attribution,
            _score("road", "cnn/seed0/removal", "pass", metric="road_gap:morf", kind="attribution"),
        ]
    )
    assert headline(judged)[1] == "PASS: no score fails (2 pass)" and badge_state(judged)[0] == "pass"


def test_a_bundled_domain_lists_the_bars_it_adds_to_the_cards():
    score = _score(
        "road", "cnn/seed0/removal", "pass", metric="road_gap:morf", kind="attribution", threshold=">= 0.029"
    )
    card = _card([score])
    card["profile"]["domains"] = {
        "morpho": {
            "bars": "cards",
            "bars_file": "bars-quick.json",
            "bar_count": 40,
            "domain_bars": {"road_gap_morf": {"bar": ">= 0.029", "rationale": "halfway: measured"}},
        },
        "gmm": {"bars": "cards", "bars_file": None, "bar_count": 39},
    }
    page = html.unescape(render_html(card))
    assert "bar on morpho (road_gap_morf)" in page and ">= 0.029: halfway: measured" in page
    assert "bar on gmm" not in page  # a bundled domain without bars of its own adds no line


def test_a_card_shows_what_the_controls_measured_on_each_domain_with_calibration_values(tmp_path):
    from cfcheck.domains import get_domain
    from cfcheck.reporting.calibration_record import collect_calibration
    from cfcheck.reporting.evidence import measured_evidence

    user_folder = tmp_path / "user_domain"
    user_folder.mkdir()
    (user_folder / "calibration-quick.json").write_text(
        json.dumps(
            {
                "domain": "mine",
                "profile": "quick",
                "values": {
                    "vce/mine/validity/target_accuracy[clf/seed0]": {
                        "truth": {"value": 0.9, "expected": "+"},
                        "identity": {"value": 0.05, "expected": "-"},
                    }
                },
            }
        )
    )
    card = _card(
        [{**_score("validity", "clf/seed0", "pass"), "domain": domain} for domain in ("morpho", "mine", "elsewhere")]
        + [
            {**_score("closeness", "clf/seed0", "pass", metric="d2"), "domain": domain}
            for domain in ("morpho", "mine", "elsewhere")
        ]
    )
    card["profile"]["domains"] = {
        "morpho": {"bars": "cards", "bars_file": None, "bar_count": 40},
        "mine": {"bars": "calibrated", "bars_file": str(user_folder / "bars-quick.json"), "bar_count": 3},
        "elsewhere": {"bars": "uncalibrated", "bars_file": None, "bar_count": 0},
    }  # no folder recorded: no row
    card["calibration"] = collect_calibration(card)  # as the run writes it
    page = html.unescape(render_html(card))
    (morpho,) = measured_evidence(get_domain("morpho"), "target_accuracy")
    assert f"<dt>measured on morpho</dt><dd>{morpho.split(', ', 1)[1]}</dd>" in page
    assert (
        "<dt>measured on mine</dt><dd>quick profile (`cfcheck calibrate`, 1 task score per control): "
        "expected to pass validity — truth 0.9; expected to fail validity — identity 0.05</dd>"
    ) in page
    assert page.count("<dt>measured on mine</dt>") == 1  # the user's file holds no d2: the d2 card has no row
    assert "measured on elsewhere" not in page
    assert page.count("<dt>measured on morpho</dt>") == 2  # target_accuracy and d2


def test_markdown_summary_rows_per_classifier_then_failures_then_all_scores():
    text = render_markdown(_card(_known()))
    assert text.index("## Summary") < text.index("## Failing scores") < text.index("## All scores")
    assert "**FAIL**: 2 of 3 suites have failing scores" in text
    vce = text[text.index("### vce · morpho") : text.index("### scm · morpho")]
    assert "| classifier | validity | closeness | target_accuracy | d2 |" in vce
    assert "| cnn | ❌ 2/4 | ✅ 2/2 | 0.9 | 0.9 |" in vce
    assert "| mlp | ⚠️ 1/2 | ✅ 2/2 | 0.9 | 0.9 |" in vce
    scm = text[text.index("### scm · morpho") : text.index("## Failing scores")]
    assert "| intervention | validity | target_accuracy |" in scm and "| do_digit | ❌ 1/2 | **0.3** ✗ |" in scm
    assert (
        "| scm | validity | target_accuracy | do_digit/seed0 | 0.3 [0.25, 0.35] | >= 0.8 | error: method raised |"
        in text
    )


def test_grids_and_badge_are_written_beside_the_scorecard(tmp_path):
    images = torch.rand(2, 1, 4, 4)
    write_example_grid(tmp_path, "vce", "morpho", "cnn/ideal/seed0", {"input": images, "counterfactual": images})
    card = _card(_known())
    for name, text in (
        ("scorecard.md", render_markdown(card, tmp_path)),
        ("scorecard.html", render_html(card, tmp_path)),
    ):
        (tmp_path / name).write_text(text)
    md = (tmp_path / "scorecard.md").read_text()
    assert '<img src="examples/vce-morpho-cnn-ideal-seed0/0_input.png"' in md
    assert (tmp_path / "examples/vce-morpho-cnn-ideal-seed0/0_input.png").is_file()
    page = (tmp_path / "scorecard.html").read_text()
    sources = [value for tag, name, value in _Tables(page).links if tag == "img"]
    assert len(sources) == 4 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "image-rendering:pixelated" in page


def test_write_scorecard_writes_every_view(tmp_path):
    from datetime import datetime, timezone

    from cfcheck.core.records import ScoreRecord
    from cfcheck.reporting.scorecard import build_scorecard

    record = ScoreRecord(
        nodeid="x",
        suite="validity",
        metric="target_accuracy",
        task="cnn/ideal/seed0",
        value=0.2,
        n=3,
        direction="higher",
        ci_low=0.1,
        ci_high=0.3,
        threshold=">= 0.8",
        verdict="fail",
        samples=[0.0, 0.0, 1.0],
        kind="vce",
        domain="morpho",
    )
    card = build_scorecard(
        [record],
        method="demo",
        profile={"name": "quick"},
        status="complete",
        seeds=[0],
        device="cpu",
        models={},
        outcomes={"failed": 1},
        started=datetime.now(timezone.utc),
    )
    path = write_scorecard(tmp_path, card, [record])
    assert "cfcheck: fail 1" in (tmp_path / "badge.svg").read_text()
    assert "FAIL: 1 of 1 suites have failing scores" in (tmp_path / "scorecard.html").read_text()
    assert load_scorecard(path)["scores"][0]["verdict"] == "fail"


def _recorded(card, values, monkeypatch):
    """``card`` with the ``calibration`` section a run writes (collected as a run collects it) when its
    domain's calibration file holds ``values`` (identity key → control → {"value", "expected"})."""
    from cfcheck.calibration import store
    from cfcheck.reporting.calibration_record import collect_calibration

    monkeypatch.setattr(store, "load_calibration_values", lambda scorecard: values)
    return {**card, "calibration": collect_calibration(card)}


def test_the_page_is_self_contained(monkeypatch):
    page = render_html(
        _recorded(
            _card(_known()),
            {
                "vce/morpho/validity/tcv[cnn/ideal/seed0]": {
                    "identity": {"value": 0.01, "expected": "-"},
                    "truth": {"value": 1.0, "expected": "+"},
                }
            },
            monkeypatch,
        )
    )
    assert "truth (expected to pass): 1" in page
    parsed = _Tables(page)
    assert not [link for link in parsed.links if re.match(r"\s*(https?:)?//", link[2], re.I)]
    assert not {"script", "link", "iframe", "object", "embed"} & set(parsed.tags)
    assert "@import" not in page and "url(http" not in page


def test_charts_draw_the_bar_the_floor_and_given_control_values(monkeypatch):
    floor = _score(
        "realism",
        "cnn/ideal/seed0",
        "fail",
        metric="fid_target",
        value=28.0,
        threshold="<= 2 × floor = 19.22",
        bar={"kind": "max", "bound": 2.0, "relative": "times_floor", "floor": 9.61, "value": 19.22},
        extra={"real_floor": [9.6, 5.9, 5.8]},
    )
    key = "vce/morpho/realism/fid_target[cnn/ideal/seed0]"
    page = render_html(
        _recorded(
            _card([floor]),
            {
                key: {
                    "identity<b>": {"value": 50.0, "expected": "-"},
                    "truth": {"value": 7.5, "expected": "+"},
                    "ctl_baseline": {"value": 9.0, "expected": ""},
                },  # not a control of this suite: not drawn
                "vce/morpho/realism/fid_target[mlp/ideal/seed0]": {"ctl_other_task": {"value": 99.0, "expected": "-"}},
            },
            monkeypatch,
        )
    )
    assert "<title>floor 9.6</title>" in page
    assert "identity&lt;b&gt; (expected to fail): 50" in page and "truth (expected to pass): 7.5" in page
    assert (
        "ctl_baseline" not in page and "ctl_other_task" not in page
    )  # another task's controls stay on that task's row
    assert "<= 2 × floor" not in page and "&lt;= 2 × floor = 19.22" in page
    assert "expected to" not in render_html({**_card([floor]), "calibration": {}})  # no controls recorded: none drawn


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=30))
def test_hostile_strings_stay_text(text):
    hostile = "<x-" + text  # "<x-" only appears in the output if something went unescaped
    scores = [
        _score("validity", hostile, "error", reason=hostile, metric=hostile, threshold=">= 0.8 " + hostile),
        _score(hostile, "cnn/ideal/seed0", "fail"),
    ]
    card = _card(scores, method=hostile)
    key = f"vce/morpho/validity/{hostile}[{hostile}]"
    page = render_html({**card, "calibration": {"vce/morpho": {"controls": {key: {"+": {hostile: 0.5}}}}}})
    assert "<x-" not in page and html.escape(hostile) in page
    markdown = render_markdown(card)
    assert "<x-" not in markdown
    assert "<x-" not in render_badge(card)


def test_the_grids_unfolded_first_are_those_of_the_tasks_every_suite_scores(tmp_path):
    """Stage tasks scored by one test (sorted first by name here) must not take the unfolded
    places of the tasks the suites score; the rest keep their order, one click away. The
    Markdown scorecard lists the grids in the same order."""
    from cfcheck.reporting.html import OPEN_GRIDS

    images = torch.rand(1, 1, 4, 4)
    stages = [f"a~stage.{i}/seed0" for i in range(3)]
    primary = [f"p{i}/ideal/seed0" for i in range(OPEN_GRIDS + 1)]
    for task in stages + primary:
        write_example_grid(tmp_path, "vce", "morpho", task, {"input": images, "counterfactual": images})
    scores = [_score("sanity", task, "pass") for task in stages]
    scores += [
        _score(suite, task, "pass", metric=f"m{j}")
        for task in primary
        for j, suite in enumerate(["validity", "closeness", "realism"])
    ]
    page = render_html(_card(scores), tmp_path)
    shown = re.findall(r"<details class='grid'( open)?><summary>vce · (\S+)", page)
    assert [task for _, task in shown] == primary + stages
    assert [task for opened, task in shown if opened] == primary[:OPEN_GRIDS]
    headings = re.findall(r"^### vce · morpho · (\S+)$", render_markdown(_card(scores), tmp_path), flags=re.M)
    assert headings == primary + stages
