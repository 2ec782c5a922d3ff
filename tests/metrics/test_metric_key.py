"""MetricKey: the one parser and formatter of a score's key, the reader of the older ``card_variant``
spelling in stored files and settings, the GOAR rule, and the recorder refusing a key without a card."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import cfcheck
from cfcheck.calibration.bars import DomainBars, read_bars_file, write_domain_bars
from cfcheck.core.thresholds import Bar
from cfcheck.metrics.cards import CARDS, UnknownMetricKey, card_of
from cfcheck.metrics.key import MetricKey
from cfcheck.scoring import ScoreRecorder

ROOT = Path(cfcheck.__file__).resolve().parent.parent


def test_parse_and_format() -> None:
    key = MetricKey.parse("oracle_score:oracle_lenet")
    assert (key.card, key.variant, str(key)) == ("oracle_score", "oracle_lenet", "oracle_score:oracle_lenet")
    plain = MetricKey.parse("tcv")
    assert (plain.card, plain.variant, str(plain)) == ("tcv", None, "tcv")
    # a variant may hold ":" itself (a fault's several parameters, a domain spec): only the first separates
    assert MetricKey.parse("domain:pkg.mod:make") == MetricKey("domain", "pkg.mod:make")
    assert MetricKey.parse(key) is key and hash(MetricKey.parse("tcv")) == hash(MetricKey("tcv"))


@pytest.mark.parametrize("bad", ["", ":x", "tcv:"])
def test_malformed_keys_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="metric key"):
        MetricKey.parse(bad)


def test_every_published_key_round_trips_bit_for_bit() -> None:
    """What a scorecard holds is written back exactly: ``str(parse(s)) == s``."""
    keys = {
        s["metric"]
        for path in (ROOT / "reports" / "published").glob("*/scorecard.json")
        for s in json.loads(path.read_text(encoding="utf-8"))["scores"]
    }
    assert len(keys) > 50
    assert [k for k in keys if str(MetricKey.parse(k)) != k] == []


def test_the_older_spelling_reads_as_the_one_spelling() -> None:
    assert MetricKey.read("road_gap_morf", CARDS) == MetricKey("road_gap", "morf")
    assert MetricKey.read("goar_gap", CARDS) == MetricKey("goar_gap")
    assert MetricKey.read("d1_5", CARDS) == MetricKey("d1_5")  # a card, not d1 with variant 5
    # the longest card wins: x_support beside x
    assert MetricKey.read("attribution_randomisation_similarity_support", CARDS).variant is None
    assert MetricKey.read("road_gap:lerf", ()) == MetricKey("road_gap", "lerf")
    for key in CARDS:  # the older spelling was card + "_" + variant
        assert MetricKey.read(f"{key}_v", CARDS) == MetricKey(key, "v")
        assert MetricKey.read(f"{key}:v", CARDS) == MetricKey(key, "v")


def test_stored_bars_in_the_older_spelling_are_read_and_rewritten_in_the_one_spelling(tmp_path: Path) -> None:
    path = tmp_path / "bars-quick.json"
    entry = {"kind": "min", "bound": 0.03, "relative": "absolute", "rationale": "old", "method_kind": "attribution"}
    path.write_text(json.dumps({"format": 1, "bars": {"road_gap_morf": entry, "goar_gap": entry}}))
    bars, rationales = read_bars_file(path, cards=CARDS)
    assert set(bars) == set(rationales) == {"road_gap:morf", "goar_gap"}
    assert bars["road_gap:morf"] == Bar(0.03, "min")
    # a calibration of another kind keeps them, in the one spelling; its own keys are written so too
    write_domain_bars(
        path, {"oracle_score:oracle_lenet": (Bar(0.5, "min"), "new")}, domain="d", profile="quick", controls={},
        method_kind="vce", cards=CARDS, without_bar={"road_gap_lerf": "no bar"},
    )  # fmt: skip
    written = json.loads(path.read_text())
    assert set(written["bars"]) == {"road_gap:morf", "goar_gap", "oracle_score:oracle_lenet"}
    assert written["without_bar"]["vce"] == {"road_gap:lerf": "no bar"}
    path.write_text(json.dumps({"format": 1, "bars": {"road_gap_morf": entry, "road_gap:morf": entry}}))
    with pytest.raises(ValueError, match="'road_gap:morf' is keyed twice"):
        read_bars_file(path, cards=CARDS)


def test_user_settings_take_either_spelling() -> None:
    from cfcheck.profiles import resolve_profile

    old = resolve_profile("quick", {"tolerances": {"road_gap_morf": 0.1}, "thresholds": {"lvs_target_digit": 0.7}})
    new = resolve_profile("quick", {"tolerances": {"road_gap:morf": 0.1}, "thresholds": {"lvs_target:digit": 0.7}})
    for profile in (old, new):
        assert profile.tolerances["road_gap:morf"] == 0.1 and "road_gap_morf" not in profile.tolerances
        # a variant's threshold takes its card's direction
        assert profile.thresholds["lvs_target:digit"] == Bar(0.7, CARDS["lvs_target"].bar_for("quick").kind)
    with pytest.raises(ValueError, match=r"\[tool.cfcheck.tolerances\] 'tcv:'"):
        resolve_profile("quick", {"tolerances": {"tcv:": 0.1}})


def test_the_goar_rule_serves_the_suite_and_the_calibration() -> None:
    from cfcheck.kinds.attribution.calibration import gap_key
    from cfcheck.kinds.attribution.removal import removal_key

    assert str(removal_key("goar", "gap", "morf")) == "goar_gap" == gap_key("goar", "morf")
    assert str(removal_key("road", "area", "lerf")) == "road_area:lerf"
    assert gap_key("roar", "lerf") == "roar_gap:lerf" == str(removal_key("roar", "gap", "lerf"))
    with pytest.raises(ValueError, match="goar"):
        removal_key("goar", "gap", "lerf")


def test_domain_bars_look_up_the_key_then_the_card() -> None:
    bars = DomainBars({"road_gap:morf": Bar(0.03, "min"), "tcv": Bar(0.5, "min")}, "calibrated")
    assert bars.get("road_gap:morf") == bars.get(MetricKey("road_gap", "morf")) == Bar(0.03, "min")
    assert bars.get("road_gap:lerf") is None
    assert bars.get("tcv:anything") == Bar(0.5, "min")


def test_an_unknown_key_names_the_closest_cards() -> None:
    with pytest.raises(UnknownMetricKey) as error:
        card_of("orcale_score:oracle_lenet")
    assert str(error.value) == (
        "unknown metric key 'orcale_score:oracle_lenet': no card 'orcale_score'; did you mean 'oracle_score'?"
    )
    with pytest.raises(KeyError, match="no card 'zzz'; `cfcheck cards` lists the known cards"):
        card_of("zzz")
    assert card_of(MetricKey("lvs_target", "digit")) is CARDS["lvs_target"]


@pytest.mark.parametrize(
    ("wrong", "meant"),
    [
        ("road_gap_morf", "'road_gap:morf'"),  # the older spelling given to the recorder
        ("fid", "'fid_target' or 'fid_domain'"),  # a card's prefix
        ("lvs_targte:digit", "'lvs_target'?"),  # only the close card, not every *_target
    ],
)
def test_the_suggestions_read_the_likely_mistakes(wrong: str, meant: str) -> None:
    with pytest.raises(UnknownMetricKey, match=f"did you mean {meant}"):
        card_of(wrong)


def _recorder() -> tuple[ScoreRecorder, list]:
    records: list = []
    session = SimpleNamespace(
        profile=SimpleNamespace(bootstrap_resamples=50, inconclusive="fail", tolerances={}),
        seed=0,
        baseline=None,
        add_record=records.append,
        bars_for=lambda domain: DomainBars({}, "uncalibrated"),
    )
    node = SimpleNamespace(
        nodeid="suite::test",
        module=None,
        path=Path("test_validity.py"),
        user_properties=[],
        get_closest_marker=lambda name: None,
    )
    return ScoreRecorder(session, node), records


def test_the_recorder_refuses_a_key_without_a_card_before_recording() -> None:
    recorder, records = _recorder()
    with pytest.raises(UnknownMetricKey, match="did you mean 'target_accuracy'"):
        recorder("target_acuracy", torch.ones(4))
    with pytest.raises(UnknownMetricKey, match="no card 'lvs_targte'"):
        recorder.unavailable("lvs_targte:digit", "no oracle")
    assert records == []


def test_the_recorder_writes_the_key_as_the_scorecards_spell_it() -> None:
    recorder, records = _recorder()
    recorder(MetricKey("oracle_score", "oracle_lenet"), torch.ones(4))
    recorder("lvs_target:digit", torch.ones(4))
    recorder.error("explain_is_deterministic", "a check, not a metric: recorded without a card")
    assert [r.metric for r in records] == ["oracle_score:oracle_lenet", "lvs_target:digit", "explain_is_deterministic"]
    assert [r.direction for r in records] == ["higher", "higher", "none"]
