"""ScoreId: a score's identity ``kind/domain/suite/metric[task]`` is written by one method and read by
one; it round-trips for every identity it accepts (tasks with brackets and slashes included), refuses
the rest naming the part, and writes exactly what the stored files hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cfcheck
from cfcheck.core.keys import MetricKey, ScoreId
from cfcheck.core.records import ScoreRecord

ROOT = Path(cfcheck.__file__).resolve().parent.parent

#: characters that make identities awkward, mixed into otherwise arbitrary text
AWKWARD = st.sampled_from(["/", "[", "]", ":", "-", " ", "a", "é", "\n"])
_text = st.text(st.one_of(AWKWARD, st.characters()), min_size=1, max_size=12)
names = _text.filter(lambda t: not any(c in t for c in "/[]"))
cards = _text.filter(lambda t: not any(c in t for c in ":[]"))
variants = st.none() | _text.filter(lambda t: not any(c in t for c in "[]"))
tasks = _text


@st.composite
def identities(draw: st.DrawFn) -> ScoreId:
    return ScoreId(draw(names), draw(names), draw(names), MetricKey(draw(cards), draw(variants)), draw(tasks))


@settings(max_examples=400, deadline=None)
@given(identities())
@example(ScoreId("vce", "morpho", "validity", MetricKey("oracle_score", "oracle_lenet"), "cnn/ideal/seed0"))
@example(ScoreId("vce", "-", "s", MetricKey("c"), "a[b]"))
@example(ScoreId("vce", "-", "s", MetricKey("c"), "]"))
@example(ScoreId("vce", "-", "s", MetricKey("c"), "[x[y]]/z]"))
@example(ScoreId("-", "-", "domains", MetricKey("domain", "examples/sklearn_digits:x"), "-"))
def test_every_identity_round_trips(score: ScoreId) -> None:
    text = score.serialise()
    assert ScoreId.parse(text) == score and str(score) == text
    # the serialised form is the one scorecards, baselines and calibration files have always held
    assert text == f"{score.kind}/{score.domain}/{score.suite}/{score.metric}[{score.task}]"
    assert score.legacy() == f"{score.metric}[{score.task}]"


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from("ab/[]:"), max_size=24))
@example("a/b/c/d[e]")
@example("a/b/c/d:e/f[g[h]]")
def test_whatever_parses_writes_back_bit_for_bit(text: str) -> None:
    try:
        score = ScoreId.parse(text)
    except ValueError as error:
        assert "not a score identity kind/domain/suite/metric[task]" in str(error)
        return
    assert score.serialise() == text


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (("vce", "morpho", "a/b", "tcv", "t"), "suite must be a non-empty name without '/', '\\[' or '\\]', got 'a/b'"),
        (("v[ce", "morpho", "validity", "tcv", "t"), "kind must be a non-empty name"),
        (("vce", "", "validity", "tcv", "t"), "domain must be a non-empty name"),
        (("vce", "morpho", "validity", "tcv:a[1]", "t"), "metric key must not hold '\\[' or '\\]', got 'tcv:a\\[1\\]'"),
        (("vce", "morpho", "validity", "tcv", ""), "task must be non-empty text"),
        (("vce", "morpho", "validity", "tcv:", "t"), "ends in ':'"),
    ],
)
def test_what_cannot_round_trip_is_refused_naming_the_part(parts: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScoreId.of(*parts)


@pytest.mark.parametrize(
    "text",
    ["vce/morpho/validity/tcv", "vce/morpho/tcv[t]", "vce/morpho/validity/tcv[t", "vce/morpho/validity/[t]", "[t]"],
)
def test_text_that_is_no_identity_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a score identity kind/domain/suite/metric\\[task\\]"):
        ScoreId.parse(text)


def test_a_record_and_its_scorecard_entry_have_one_identity() -> None:
    record = ScoreRecord("n", "validity", "lvs_target:digit", "cnn/ideal/seed0", 0.5, 4, "higher", kind="vce")
    assert record.id == ScoreId("vce", "-", "validity", MetricKey("lvs_target", "digit"), "cnn/ideal/seed0")
    assert record.key == "vce/-/validity/lvs_target:digit[cnn/ideal/seed0]" == record.id.serialise()
    assert record.legacy_key == "lvs_target:digit[cnn/ideal/seed0]"
    assert ScoreId.from_score(record.to_dict()) == record.id
    # a scorecard from before kinds and domains: "-" for both
    assert ScoreId.from_score({"suite": "validity", "metric": "tcv", "task": "t"}).serialise() == "-/-/validity/tcv[t]"
    with pytest.raises(ValueError, match="a score without task has no identity"):
        ScoreId.from_score({"suite": "validity", "metric": "tcv"})


def test_the_stored_identities_parse_and_write_back_unchanged() -> None:
    """Every identity the repository stores (calibration values) and every score of the published
    scorecards is what ScoreId writes: no stored file needs rewriting."""
    stored = [
        key
        for path in sorted(ROOT.glob("cfcheck/domains/*/calibration-quick.json"))
        + sorted(ROOT.glob("examples/*/calibration-quick.json"))
        for key in json.loads(path.read_text(encoding="utf-8"))["values"]
    ]
    assert len(stored) > 1000
    assert [key for key in stored if ScoreId.parse(key).serialise() != key] == []
    scores = [
        s
        for path in sorted(ROOT.glob("reports/published/*/scorecard.json"))
        for s in json.loads(path.read_text(encoding="utf-8"))["scores"]
    ]
    assert len(scores) > 1000
    written = {ScoreId.from_score(s).serialise() for s in scores}
    assert written == {f"{s['kind']}/{s['domain']}/{s['suite']}/{s['metric']}[{s['task']}]" for s in scores}
