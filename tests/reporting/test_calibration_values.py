"""The controls' values kept by ``cfcheck calibrate`` for the HTML charts: which controls count,
which sign each gets per suite, and that a scorecard of the same domain and profile finds them
(and one of another profile does not); and the verdict matrix's suite summaries."""

from __future__ import annotations

import json

import pytest

from cfcheck.calibration import store as calibration_store
from cfcheck.calibration.store import (
    calibration_values,
    load_calibration_values,
    write_calibration_values,
)
from cfcheck.cli import calibrate_run as calibration
from cfcheck.cli.calibrate_run import suite_summary
from cfcheck.controls import bundled_expectation, expected_sign
from cfcheck.kinds.declaration import Expectation


def _card(profile="quick", domain="morpho", value=0.5):
    return {
        "profile": {"name": profile},
        "scores": [
            {
                "kind": "vce",
                "domain": domain,
                "suite": "validity",
                "metric": "tcv",
                "task": "cnn/ideal/seed0",
                "value": value,
            },
            {
                "kind": "vce",
                "domain": domain,
                "suite": "random_classifier",
                "metric": "ota_gain",
                "task": "cnn/seed0",
                "value": value,
            },
            {
                "kind": "vce",
                "domain": domain,
                "suite": "validity",
                "metric": "ta",
                "task": "cnn/ideal/seed0",
                "value": None,
            },
        ],
    }


def test_signs_follow_the_controls_expectations_per_suite():
    assert expected_sign("truth", "validity") == "+" and expected_sign("truth", "random_classifier") == "-"
    assert expected_sign("identity", "closeness") == "+" and expected_sign("identity", "realism") == "-"
    assert expected_sign("truth", "validity") is Expectation.PASS
    assert expected_sign("nearest", "realism") is None and expected_sign("wachter", "validity") is None
    assert expected_sign("not-a-control", "validity") is None


def test_values_keep_controls_only_with_their_sign_and_skip_missing_values():
    values = calibration_values(
        {"truth": _card(value=1.0), "identity": _card(value=0.0), "wachter": _card(value=0.7)}, bundled_expectation
    )
    key = "vce/morpho/validity/tcv[cnn/ideal/seed0]"
    assert values[key] == {"truth": {"value": 1.0, "expected": "+"}, "identity": {"value": 0.0, "expected": "-"}}
    assert values["vce/morpho/random_classifier/ota_gain[cnn/seed0]"]["truth"]["expected"] == "-"
    assert not any("ta[" in k for k in values)  # a score without a value has nothing to draw


def test_written_values_are_found_by_a_scorecard_of_the_same_domain_and_profile(tmp_path, monkeypatch):
    (tmp_path / "morpho").mkdir()
    monkeypatch.setattr(
        calibration_store, "calibration_path", lambda domain, profile: tmp_path / domain / f"calibration-{profile}.json"
    )
    paths = write_calibration_values(
        {"truth": _card(value=1.0), "noise": _card(domain="absent")}, "quick", expected=bundled_expectation
    )
    assert paths == [tmp_path / "morpho" / "calibration-quick.json"]  # no folder for "absent": nothing written
    stored = json.loads(paths[0].read_text())
    assert stored["profile"] == "quick" and stored["domain"] == "morpho"
    found = load_calibration_values(_card())
    assert found["vce/morpho/validity/tcv[cnn/ideal/seed0]"] == {"truth": {"value": 1.0, "expected": "+"}}
    assert load_calibration_values(_card(profile="standard")) == {}
    paths[0].write_text("{not json")
    assert load_calibration_values(_card()) == {}  # damaged: the charts lose their markers, nothing else


@pytest.mark.parametrize("profile", ["quick"])
def test_the_bundled_calibration_covers_the_published_scorecards(profile):
    path = calibration_store.calibration_path("morpho", profile)
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `cfcheck calibrate --profile {profile}` (or --reuse) to write it")
    values = json.loads(path.read_text())["values"]
    signs = {entry["expected"] for controls in values.values() for entry in controls.values()}
    assert signs <= {"+", "-", ""} and "+" in signs and "-" in signs
    assert any("truth" in controls for controls in values.values())


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({"pass": 6}, "PASS 6/6"),
        ({"pass": 3, "fail": 2, "inconclusive": 1}, "FAIL 3/6 (1 inconcl.)"),
        ({"pass": 5, "inconclusive": 1}, "INCONCL. 5/6 (1 inconcl.)"),
        ({"pass": 5, "error": 1}, "FAIL 5/6"),
        ({}, "-"),
    ],
)
def test_a_suite_summary_fails_only_on_a_failure(counts, expected):
    assert suite_summary(counts) == expected


def test_calibrate_redraws_the_runs_html_with_the_values_it_wrote(tmp_path, monkeypatch, capsys):
    """A run records the controls' values (and draws its HTML) before calibrate writes the new values;
    calibrate must record the new ones in its scorecard and redraw it, or the published charts mark the
    controls of the calibration before."""
    from cfcheck.reporting.formats import render_run

    (tmp_path / "morpho").mkdir()
    monkeypatch.setattr(
        calibration_store, "calibration_path", lambda domain, profile: tmp_path / domain / f"calibration-{profile}.json"
    )
    out = tmp_path / "published"
    for name in calibration.KIND_CONTROL_TABLES["vce"]:
        card = {
            **_card(value=0.25 if name == "truth" else 0.75),
            "format": 3,
            "status": "complete",
            "method": name,
            "outcomes": {},
            "costs": {},
            "provenance": {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:10+00:00"},
        }
        for score in card["scores"]:
            score.update(ci_low=None, ci_high=None, n=120, threshold=">= 0.5", verdict="pass", direction="higher")
        (out / f"{name}-quick").mkdir(parents=True)
        (out / f"{name}-quick" / "scorecard.json").write_text(json.dumps(card))
        render_run(out / f"{name}-quick")  # as the run drew it: no calibration file yet
    before = (out / "noise-quick" / "scorecard.html").read_text()
    assert "truth (expected to pass): 0.25" not in before
    assert calibration.main(["--reuse", "--out", str(out)]) == 0
    capsys.readouterr()
    after = (out / "noise-quick" / "scorecard.html").read_text()
    assert "truth (expected to pass): 0.25" in after and "noise (expected to fail): 0.75" in after
    recorded = json.loads((out / "noise-quick" / "scorecard.json").read_text())["calibration"]["vce/morpho"]
    assert recorded["controls"]["vce/morpho/validity/tcv[cnn/ideal/seed0]"]["+"]["truth"] == 0.25


def _scm_card(value=0.5, domain="morpho"):
    return {
        "profile": {"name": "quick"},
        "scores": [
            {
                "kind": "scm",
                "domain": domain,
                "suite": "composition",
                "metric": "composition_l1:m1",
                "task": "do_digit/seed0",
                "value": value,
            },
            {
                "kind": "scm",
                "domain": domain,
                "suite": "effectiveness",
                "metric": "effectiveness_accuracy:digit",
                "task": "do_digit/seed0",
                "value": value,
            },
        ],
    }


def _publish(out, name, card):
    """A stored run of ``name`` under ``out``, as ``cfcheck calibrate --reuse`` reads it."""
    card = {
        **card,
        "format": 3,
        "status": "complete",
        "method": name,
        "outcomes": {},
        "costs": {},
        "provenance": {"started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:12+00:00"},
    }
    for score in card["scores"]:
        score.update(ci_low=None, ci_high=None, n=100, threshold="<= 0.035", verdict="pass", direction="lower")
    (out / f"{name}-quick").mkdir(parents=True)
    (out / f"{name}-quick" / "scorecard.json").write_text(json.dumps(card))


@pytest.fixture
def calibration_folder(tmp_path, monkeypatch):
    """A temporary morpho calibration folder holding VCE values and a stale SCM entry."""
    (tmp_path / "morpho").mkdir()
    monkeypatch.setattr(
        calibration_store, "calibration_path", lambda domain, profile: tmp_path / domain / f"calibration-{profile}.json"
    )
    paths = write_calibration_values(
        {"truth": _card(value=1.0), "identity": _card(value=0.0)}, "quick", expected=bundled_expectation
    )
    stored = json.loads(paths[0].read_text())
    stored["values"]["scm/morpho/composition/retired_metric[do_digit/seed0]"] = {
        "scm_truth": {"value": 3.0, "expected": "+"}
    }
    paths[0].write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return paths[0]


def _entries(path, kind):
    """The JSON text of each entry of ``kind`` as the file holds it (to compare byte for byte)."""
    values = json.loads(path.read_text())["values"]
    return {
        key: json.dumps(controls, indent=1, sort_keys=True)
        for key, controls in values.items()
        if key.startswith(kind + "/")
    }


def test_scm_controls_count_as_controls_and_only_complete_kinds_are_calibrated():
    assert calibration.KIND_CONTROLS["scm"] == tuple(calibration.KIND_CONTROL_TABLES["scm"])
    assert "wachter" not in calibration.KIND_CONTROLS["vce"] and "truth" in calibration.KIND_CONTROLS["vce"]
    assert calibration.calibrated_kinds(["scm_truth", "scm_identity", "scm_resample"]) == ()
    assert calibration.calibrated_kinds([*calibration.KIND_CONTROL_TABLES["scm"], "dvce"]) == ("scm",)
    assert calibration.calibrated_kinds(
        [*calibration.KIND_CONTROL_TABLES["vce"], *calibration.KIND_CONTROL_TABLES["scm"]]
    ) == ("vce", "scm")
    values = calibration_values(
        {"scm_identity": _scm_card(value=0.0), "scm_vae": _scm_card(value=0.2)}, bundled_expectation
    )
    assert values["scm/morpho/effectiveness/effectiveness_accuracy:digit[do_digit/seed0]"] == {
        "scm_identity": {"value": 0.0, "expected": "-"}
    }  # a reference generator is not a control


def test_a_partial_scm_calibration_writes_nothing(calibration_folder, tmp_path, capsys):
    before = calibration_folder.read_bytes()
    out = tmp_path / "published"
    for name in ("scm_truth", "scm_identity", "scm_resample"):  # scm_noise did not run
        _publish(out, name, _scm_card())
    assert (
        calibration.main(["--reuse", "--out", str(out), "--methods", "scm_truth", "scm_identity", "scm_resample"]) == 0
    )
    assert "wrote" not in capsys.readouterr().err
    assert calibration_folder.read_bytes() == before


def test_a_full_scm_calibration_replaces_the_scm_entries_and_keeps_the_vce_ones(calibration_folder, tmp_path, capsys):
    vce_before = _entries(calibration_folder, "vce")
    assert vce_before and "scm/morpho/composition/retired_metric[do_digit/seed0]" in _entries(calibration_folder, "scm")
    out = tmp_path / "published"
    for value, name in enumerate(calibration.KIND_CONTROL_TABLES["scm"]):
        _publish(out, name, _scm_card(value=float(value)))
    assert calibration.main(["--reuse", "--out", str(out), "--methods", *calibration.KIND_CONTROL_TABLES["scm"]]) == 0
    assert f"wrote {calibration_folder} (scm values)" in capsys.readouterr().err
    assert _entries(calibration_folder, "vce") == vce_before  # untouched, byte for byte
    stored = json.loads(calibration_folder.read_text())
    assert stored["profile"] == "quick" and stored["domain"] == "morpho"
    scm = {key: controls for key, controls in stored["values"].items() if key.startswith("scm/")}
    assert set(scm) == {
        "scm/morpho/composition/composition_l1:m1[do_digit/seed0]",
        "scm/morpho/effectiveness/effectiveness_accuracy:digit[do_digit/seed0]",
    }  # the stale one went
    composition = scm["scm/morpho/composition/composition_l1:m1[do_digit/seed0]"]
    assert {name: entry["expected"] for name, entry in composition.items()} == {
        "scm_truth": "+",
        "scm_identity": "+",
        "scm_resample": "-",
        "scm_noise": "-",
    }
    assert [composition[name]["value"] for name in calibration.KIND_CONTROL_TABLES["scm"]] == [0.0, 1.0, 2.0, 3.0]
    # the run's HTML is redrawn with the values it wrote
    assert "scm_resample (expected to fail): 2" in (out / "scm_noise-quick" / "scorecard.html").read_text()


def test_recalibrating_one_kind_does_not_touch_another_and_a_damaged_file_is_not_overwritten(calibration_folder):
    write_calibration_values(
        {name: _scm_card(value=0.5) for name in calibration.KIND_CONTROL_TABLES["scm"]},
        "quick",
        kinds=("scm",),
        expected=bundled_expectation,
    )
    scm_before = _entries(calibration_folder, "scm")
    write_calibration_values(
        {"truth": _card(value=0.9), "scm_truth": _scm_card(value=7.0)},
        "quick",
        kinds=("vce",),
        expected=bundled_expectation,
    )
    assert _entries(calibration_folder, "scm") == scm_before  # scm_truth's new value was not of a recalibrated kind
    assert json.loads(calibration_folder.read_text())["values"]["vce/morpho/validity/tcv[cnn/ideal/seed0]"] == {
        "truth": {"value": 0.9, "expected": "+"}
    }  # identity's old vce entry went with its kind
    calibration_folder.write_text("{not json")
    with pytest.raises(ValueError, match="move it aside"):
        write_calibration_values({"truth": _card(value=0.9)}, "quick", expected=bundled_expectation)
    assert calibration_folder.read_text() == "{not json"


def test_a_kind_measured_by_another_command_keeps_its_expectations_and_its_command(calibration_folder):
    def expected(control, suite, metric):
        return {"tcv": "+"}.get(metric, "") if control == "mine" else "-"

    write_calibration_values(
        {"mine": _card(value=0.3)}, "quick", kinds=("vce",), expected=expected, command="python tools/measure.py"
    )
    stored = json.loads(calibration_folder.read_text())
    assert stored["commands"] == {"vce": "python tools/measure.py"}
    assert stored["values"]["vce/morpho/validity/tcv[cnn/ideal/seed0]"] == {"mine": {"value": 0.3, "expected": "+"}}
    assert stored["values"]["vce/morpho/random_classifier/ota_gain[cnn/seed0]"]["mine"]["expected"] == ""
    write_calibration_values(
        {"truth": _card(value=0.9)}, "quick", kinds=("vce",), expected=bundled_expectation
    )  # `cfcheck calibrate` again
    assert "commands" not in json.loads(calibration_folder.read_text())
    with pytest.raises(ValueError, match="command"):
        write_calibration_values({"truth": _card(value=0.9)}, "quick", command="", expected=bundled_expectation)


def test_a_kinds_domain_calibration_replaces_its_own_values_and_keeps_the_other_kinds(tmp_path):
    """A VCE calibration of a domain after an SCM one (or the reverse) keeps the other kind's values
    and sections; its own old entries (a score no longer measured too) are gone."""
    path = tmp_path / "calibration-quick.json"
    scm_key, vce_key, old_vce = "scm/d/composition/composition_l1:m1[t]", "vce/d/validity/d1[t]", "vce/d/v/old[t]"
    path.write_text(
        json.dumps({"values": {scm_key: {"identity": {"value": 0.0}}, old_vce: {}}, "scm": {"seeds": [0, 1, 2]}})
    )
    calibration_store.merge_kind_values(path, "vce", {vce_key: {"noise": {"value": 0.1}}}, profile="quick", seeds=[0])
    data = json.loads(path.read_text())
    assert set(data["values"]) == {scm_key, vce_key}
    assert data["values"][scm_key] == {"identity": {"value": 0.0}} and data["scm"] == {"seeds": [0, 1, 2]}
    assert data["profile"] == "quick" and data["seeds"] == [0]


def test_a_damaged_values_file_is_not_overwritten(tmp_path):
    path = tmp_path / "calibration-quick.json"
    path.write_text("{not json")
    with pytest.raises(RuntimeError, match="not a readable calibration file"):
        calibration_store.merge_kind_values(path, "vce", {}, profile="quick")
    assert path.read_text() == "{not json"
