"""What the controls measured, per metric card: the summary against a brute-force count over values
whose answer is known by construction, the sentence, the file loader, and the consistency of every
bundled card's bar with the controls' values on morpho."""

from __future__ import annotations

import doctest
import json
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cfcheck.reporting.evidence as evidence_module
import cfcheck.reporting.evidence_summary as evidence_summary
from cfcheck.domains import get_domain
from cfcheck.kinds.scm.cards import CARDS as SCM_OWN_CARDS
from cfcheck.metrics.cards import CARDS
from cfcheck.metrics.key import MetricKey
from cfcheck.reporting.evidence import (
    CardEvidence,
    ControlRange,
    measured_evidence,
    render_evidence,
    summarise_evidence,
)


def _entry(value, expected):
    return {"value": value, "expected": expected}


#: oracle_score over two variants and two tasks; other keys that share a prefix or a suite must be ignored
VALUES = {
    "vce/toy/validity/oracle_score:o_a[cnn/a]": {
        "truth": _entry(0.9, "+"),
        "noise": _entry(0.1, "-"),
        "pgd": _entry(0.5, ""),
    },
    "vce/toy/validity/oracle_score:o_b[cnn/a]": {
        "truth": _entry(1.0, "+"),
        "noise": _entry(0.3, "-"),
        "pgd": _entry(0.2, ""),
    },
    "vce/toy/validity/oracle_score:o_a[mlp/b]": {
        "truth": _entry(0.95, "+"),
        "noise": _entry(0.0, "-"),
        "pgd": _entry(0.7, ""),
    },
    "vce/toy/validity/oracle_score:o_b[mlp/b]": {
        "truth": _entry(0.92, "+"),
        "noise": _entry(0.2, "-"),
        "pgd": _entry(0.4, ""),
    },
    "vce/toy/validity/oracle_score_extra[cnn/a]": {"truth": _entry(-5.0, "+")},
    "vce/toy/validity/tcv[cnn/a]": {"truth": _entry(7.0, "+"), "identity": _entry(0.0, "-")},
}


def _brute_force(values, card_key):
    """(control, sign) → (min, max, count), parsing the keys with a regular expression."""
    found = {}
    for key, controls in values.items():
        match = re.fullmatch(r"[^/]+/[^/]+/[^/]+/([^:\[]+)(?::[^\[]+)?\[.+\]", key)
        if match is None or match.group(1) != card_key:
            continue
        for control, entry in controls.items():
            low, high, count = found.get((control, entry["expected"]), (float("inf"), float("-inf"), 0))
            found[control, entry["expected"]] = (min(low, entry["value"]), max(high, entry["value"]), count + 1)
    return found


def test_the_summary_pools_variants_and_matches_the_known_answer():
    evidence = summarise_evidence(VALUES, "oracle_score")
    # known by construction: truth 0.9–1, noise 0–0.3, pgd 0.2–0.7, 4 scores each (2 tasks × 2 variants)
    assert evidence.ranges == (
        ControlRange("truth", "+", 0.9, 1.0, 4),
        ControlRange("noise", "-", 0.0, 0.3, 4),
        ControlRange("pgd", "", 0.2, 0.7, 4),
    )
    assert (evidence.suites, evidence.variants, evidence.task_count) == (("validity",), ("o_a", "o_b"), 2)
    brute = _brute_force(VALUES, "oracle_score")
    assert {(r.control, r.expected): (r.low, r.high, r.count) for r in evidence.ranges} == brute
    assert summarise_evidence(VALUES, "tcv").ranges == (
        ControlRange("truth", "+", 7.0, 7.0, 1),
        ControlRange("identity", "-", 0.0, 0.0, 1),
    )


def test_an_absent_key_gives_none_and_bad_arguments_are_refused():
    assert summarise_evidence(VALUES, "d2") is None
    assert summarise_evidence({}, "tcv") is None
    with pytest.raises(ValueError, match="without a variant"):
        summarise_evidence(VALUES, "oracle_score:o_a")
    with pytest.raises(ValueError, match="no finite value"):
        summarise_evidence({"vce/toy/validity/tcv[t]": {"truth": _entry("high", "+")}}, "tcv")
    with pytest.raises(ValueError, match="expected"):
        summarise_evidence({"vce/toy/validity/tcv[t]": {"truth": _entry(1.0, "yes")}}, "tcv")


def test_the_sentence_groups_by_expected_sign():
    text = render_evidence(summarise_evidence(VALUES, "oracle_score"), profile="quick", domain="toy")
    assert text == (
        "on toy, quick profile (`cfcheck calibrate`, 4 scores per control: 2 tasks, variants o_a, o_b "
        "pooled): expected to pass validity — truth 0.9–1; expected to fail validity — noise 0–0.3; "
        "no expectation — pgd 0.2–0.7"
    )
    shared = CardEvidence(
        "kid",
        ("realism",),
        (),
        3,
        (
            ControlRange("truth", "+", -0.0321, 0.13, 3),
            ControlRange("truth_rejecting", "+", -0.0321, 0.13, 3),
            ControlRange("noise", "-", 19.44, 19.44, 2),
        ),
    )
    assert render_evidence(shared, profile="quick") == (
        "quick profile (`cfcheck calibrate`, task scores per control in brackets): expected to pass realism — "
        "truth, truth_rejecting −0.0321 to 0.13 (3); expected to fail realism — noise 19.4 (2)"
    )
    with pytest.raises(ValueError, match="profile"):
        render_evidence(shared, profile="")


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.tuples(
            st.sampled_from(["d1", "d1_5", "oracle_score:o_a", "oracle_score:o_b"]), st.sampled_from(["t0", "t1", "t2"])
        ),
        st.dictionaries(
            st.sampled_from(["truth", "noise", "pgd", "mine"]),
            st.tuples(st.floats(-1e6, 1e6), st.sampled_from(["+", "-", ""])),
            min_size=1,
        ),
        max_size=12,
    )
)
def test_every_value_lies_in_its_reported_range_and_the_counts_add_up(scores):
    values = {
        f"vce/toy/closeness/{metric}[{task}]": {c: _entry(v, s) for c, (v, s) in controls.items()}
        for (metric, task), controls in scores.items()
    }
    for card_key in ("d1", "oracle_score"):
        evidence = summarise_evidence(values, card_key)
        entries = [
            (control, entry)
            for key, controls in values.items()
            if re.search(rf"/{card_key}[:\[]", key)
            for control, entry in controls.items()
        ]
        if not entries:
            assert evidence is None
            continue
        spans = {(r.control, r.expected): r for r in evidence.ranges}
        for control, entry in entries:
            span = spans[control, entry["expected"]]
            assert span.low <= entry["value"] <= span.high
        assert sum(r.count for r in evidence.ranges) == len(entries)
        assert len(spans) == len(evidence.ranges)  # one span per (control, sign)


def test_the_loader_reads_a_domain_folder_and_names_a_malformed_file(tmp_path):
    domain = SimpleNamespace(name="toy", calibration_dir=tmp_path)
    assert measured_evidence(domain, "oracle_score") == []  # no file
    assert measured_evidence(SimpleNamespace(name="none", calibration_dir=None), "tcv") == []
    path = tmp_path / "calibration-quick.json"
    path.write_text(json.dumps({"domain": "toy", "profile": "quick", "values": VALUES}))
    (sentence,) = measured_evidence(domain, "oracle_score")
    assert sentence.startswith("on toy, quick profile")
    assert measured_evidence(domain, "d2") == []  # the file holds no score of d2
    assert measured_evidence(domain, "tcv", profile="full") == []
    (tmp_path / "calibration-standard.json").write_text("{not json")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "calibration-standard.json"))):
        measured_evidence(domain, "tcv", profile="standard")
    (tmp_path / "calibration-full.json").write_text(json.dumps({"values": {"vce/toy/v/tcv[t]": {"truth": 3}}}))
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "calibration-full.json"))):
        measured_evidence(domain, "tcv", profile="full")


def test_the_module_examples_run():
    assert doctest.testmod(evidence_module).failed == 0
    assert doctest.testmod(evidence_summary).failed == 0


def _card_key(identity):
    return MetricKey.parse(identity.split("/", 3)[3].split("[", 1)[0]).card


#: (card, control) where a control expected to pass the card's suite fails the card's bar on some task
#: score on morpho, or one expected to fail it passes; each reason is written in the card's rationale.
MORPHO_EXCEPTIONS = {
    ("target_accuracy", "pgd"): "targeted PGD flips f by construction; the committee's OTA fails it",
    ("d1", "nearest"): "the L2-nearest real image is closer than the truth in pixels",
    ("d1_5", "nearest"): "the L2-nearest real image is closer than the truth in pixels",
    ("elastic_net", "nearest"): "the L2-nearest real image is closer than the truth in pixels",
    ("perceptual_distance", "nearest"): "the domain network sees the nearest real image as close as the truth",
    ("ota_gain", "identity"): "identity changes no input, so gains nothing; randomisation_similarity fails it",
    ("im1", "class_mean"): "a class's mean image is what its autoencoder reconstructs best: just under the bar on "
    "the ideal pairs, inconclusive with its interval",
}
_IDENTITY_KEEPS = (
    "identity keeps every parent: it fails only on a parent the causal graph moves and passes on "
    "those the intervention leaves alone; effectiveness fails it"
)
#: the same for the SCM controls (`cfcheck calibrate --methods scm_truth scm_identity scm_resample scm_noise`)
SCM_MORPHO_EXCEPTIONS = {
    ("preservation_error", "scm_identity"): _IDENTITY_KEEPS,
    ("preservation_predictor_error", "scm_identity"): _IDENTITY_KEEPS,
    ("preservation_accuracy", "scm_identity"): "the digit descends from no intervened parent: keeping it is right",
    ("preservation_predictor_accuracy", "scm_identity"): "the digit descends from no intervened parent: keeping it "
    "is right",
}
_CONTROL_WORDS = {
    "pgd": "PGD",
    "noise": "noise",
    "nearest": "nearest",
    "identity": "Identity",
    "class_mean": "class_mean",
    "scm_identity": "scm_identity",
}
#: every SCM card with an absolute bar: the SCM controls' values must cover each of them
_SCM_ABSOLUTE = {
    card.key
    for card in SCM_OWN_CARDS
    if card.bar_for("quick") is not None and card.bar_for("quick").relative == "absolute"
}


@pytest.mark.parametrize(
    ("kind", "exceptions", "must_check"),
    [
        (
            "vce",
            MORPHO_EXCEPTIONS,
            {"target_accuracy", "committee_oracle_target_accuracy", "lvs_target", "d1", "mnac", "im1", "ota_gain"},
        ),
        ("scm", SCM_MORPHO_EXCEPTIONS, _SCM_ABSOLUTE),
    ],
)
def test_every_absolute_bar_separates_the_controls_on_morpho_but_for_the_listed_exceptions(
    kind, exceptions, must_check
):
    """Every control expected to pass a card's suite passes its absolute bar on every task score of
    morpho's calibration file, and every control expected to fail it fails the bar, but for the
    listed exceptions, whose reason the card's rationale states. A floor-relative bar is skipped:
    judging it needs the run's floor, which the file does not keep."""
    path = get_domain("morpho").calibration_dir / "calibration-quick.json"
    values = json.loads(path.read_text())["values"]
    checked, violations = set(), set()
    for identity, controls in values.items():
        card = CARDS.get(_card_key(identity))
        bar = card.bar_for("quick") if card is not None and identity.startswith(f"{kind}/") else None
        if bar is None or bar.relative != "absolute":  # a floor-relative bar needs the run's floor
            continue
        checked.add(card.key)
        for control, entry in controls.items():
            passes = bar.passes(entry["value"])
            if (entry["expected"] == "+" and not passes) or (entry["expected"] == "-" and passes):
                violations.add((card.key, control))
    assert must_check <= checked, f"no {kind} values in {path} for {sorted(must_check - checked)}"
    assert violations == set(exceptions)  # a stale exception fails too
    for (key, control), _ in exceptions.items():
        rationale = CARDS[key].rationale
        assert _CONTROL_WORDS[control] in rationale and "pass" in rationale, (key, control, rationale)


def test_the_scm_controls_are_kept_with_their_expectations_and_cover_each_intervention():
    """`cfcheck calibrate --seeds 0 1 2 --methods scm_truth ...` wrote every SCM control on every task
    score of morpho, on each seed."""
    from cfcheck.controls import KIND_CONTROL_TABLES, expected_sign

    SCM_CONTROLS = KIND_CONTROL_TABLES["scm"]

    path = get_domain("morpho").calibration_dir / "calibration-quick.json"
    scm = {key: controls for key, controls in json.loads(path.read_text())["values"].items() if key.startswith("scm/")}
    tasks = {key.split("[", 1)[1].rstrip("]") for key in scm}
    assert tasks == {f"do_{parent}/seed{seed}" for parent in ("digit", "intensity", "thickness") for seed in (0, 1, 2)}
    for key, controls in scm.items():
        assert set(controls) == set(SCM_CONTROLS), key
        suite = key.split("/")[2]
        assert {name: entry["expected"] for name, entry in controls.items()} == {
            name: expected_sign(name, suite) or "" for name in SCM_CONTROLS
        }, key


#: an attribution calibration file: two variants of one card as `card_variant` (the gap bars' keys), a
#: card whose key extends another's, a `card:variant` key, and a variant without a bar
SEEDS = {
    "roles": {"signal": "+", "signal + noise 1": "ladder:1", "signal + noise 0.5": "ladder:0.5", "random": "-"},
    "values": {
        "gap_morf": {
            "random": {"0": 0.01, "1": -0.02, "2": 0.0},
            "signal": {"0": 0.5, "1": 0.4, "2": 0.45},
            "signal + noise 1": {"0": 0.2, "1": 0.3, "2": 0.25},
            "signal + noise 0.5": {"0": 0.35},
        },
        "gap_lerf": {"signal": {"0": 0.1}, "random": {"0": 0.3}, "mine": {"0": 7.0}},
        "similarity": {"signal": {"0": 0.2, "1": 0.1}},
        "similarity_support": {"signal": {"0": 0.9}},
        "cascade:conv1": {"signal": {"0": 0.8}},
        "cascade:fc": {"signal": {"0": 0.6}},
    },
    "without_bar": {"gap_lerf": "the ladder rises"},
}
_KNOWN = ("gap", "similarity", "similarity_support", "cascade")


def test_the_seed_reader_spans_each_control_over_its_seeds_per_variant_grouped_by_role():
    from cfcheck.reporting.evidence import summarise_seed_evidence

    lerf, morf = summarise_seed_evidence(SEEDS, "gap", _KNOWN)
    # known by construction: per variant, min and max over the seeds; positive, then the ladder by ratio, then negative
    assert morf.variants == ("morf",) and morf.ranges == (
        ControlRange("signal", "+", 0.4, 0.5, 3),
        ControlRange("signal + noise 0.5", "ladder:0.5", 0.35, 0.35, 1),
        ControlRange("signal + noise 1", "ladder:1", 0.2, 0.3, 3),
        ControlRange("random", "-", -0.02, 0.01, 3),
    )
    assert (morf.without_bar, lerf.without_bar) == ("", "the ladder rises")
    assert [r.control for r in lerf.ranges] == ["signal", "random", "mine"]  # a control without a role: no expectation
    (similarity,) = summarise_seed_evidence(SEEDS, "similarity", _KNOWN)
    assert similarity.variants == () and similarity.ranges == (ControlRange("signal", "+", 0.1, 0.2, 2),)
    (support,) = summarise_seed_evidence(SEEDS, "similarity_support", _KNOWN)
    assert support.ranges == (ControlRange("signal", "+", 0.9, 0.9, 1),)
    assert [e.variants for e in summarise_seed_evidence(SEEDS, "cascade", _KNOWN)] == [("conv1",), ("fc",)]
    assert summarise_seed_evidence(SEEDS, "absent", _KNOWN) == ()
    with pytest.raises(ValueError, match="role"):
        summarise_seed_evidence({**SEEDS, "roles": {"signal": "better"}}, "gap", _KNOWN)
    with pytest.raises(ValueError, match="no finite value"):
        summarise_seed_evidence({"values": {"gap": {"signal": {"0": "high"}}}}, "gap")
    with pytest.raises(ValueError, match="seed"):
        summarise_seed_evidence({"values": {"gap": {"signal": 0.3}}}, "gap")
    with pytest.raises(ValueError, match="values"):
        summarise_seed_evidence({"roles": {}}, "gap")


def test_the_seed_sentence_names_the_roles_the_command_and_the_reason_for_no_bar():
    from cfcheck.reporting.evidence import summarise_seed_evidence

    lerf, morf = summarise_seed_evidence(SEEDS, "gap", _KNOWN, command="cfcheck calibrate --kind attribution")
    assert render_evidence(morf, profile="quick", domain="toy") == (
        "on toy, quick profile (`cfcheck calibrate --kind attribution`, seeds per control in brackets, variant "
        "morf): positive — signal: 0.4–0.5 (3); the noise ladder (the signal plus noise of that many times its "
        "norm) — signal + noise 0.5: 0.35 (1), signal + noise 1: 0.2–0.3 (3); negative — random: −0.02 to 0.01 (3)"
    )
    assert render_evidence(lerf, profile="quick").endswith("; no bar: the ladder rises")


def test_the_attribution_file_is_read_beside_the_scores_file(tmp_path):
    domain = SimpleNamespace(name="toy", calibration_dir=tmp_path)
    (tmp_path / "calibration-attribution-quick.json").write_text(
        json.dumps(
            {
                "profile": "quick",
                "roles": SEEDS["roles"],
                "without_bar": {"road_gap_lerf": "the ladder rises"},
                "values": {"road_gap_morf": SEEDS["values"]["gap_morf"], "road_gap:lerf": SEEDS["values"]["gap_lerf"]},
            }
        )
    )
    lerf, morf = measured_evidence(domain, "road_gap")
    assert lerf.startswith("on toy, quick profile (`cfcheck calibrate --kind attribution`, ")
    assert "variant lerf" in lerf and lerf.endswith("no bar: the ladder rises") and "variant morf" in morf
    (tmp_path / "calibration-quick.json").write_text(json.dumps({"profile": "quick", "values": VALUES}))
    assert len(measured_evidence(domain, "road_gap")) == 2 and len(measured_evidence(domain, "tcv")) == 1


@pytest.mark.parametrize("name", ["morpho", "gmm"])
def test_the_bundled_attribution_values_show_on_road_gap_with_the_reason_for_each_missing_bar(name):
    path = get_domain(name).calibration_dir / "calibration-attribution-quick.json"
    data = json.loads(path.read_text())
    sentences = measured_evidence(get_domain(name), "road_gap")
    assert [s.split("variant ", 1)[1].split(")", 1)[0] for s in sentences] == ["lerf", "morf"]
    for sentence in sentences:
        variant = sentence.split("variant ", 1)[1].split(")", 1)[0]
        reason = data.get("without_bar", {}).get(f"road_gap_{variant}")
        assert (f"no bar: {reason}" in sentence) if reason else ("no bar" not in sentence), sentence
        assert "positive — " in sentence and "the noise ladder" in sentence and "negative — " in sentence


def test_the_s_sharp_bar_separates_the_latent_controls_on_every_task_score_of_glyphs():
    """The S# bar lets the informed-search oracle pass and fails identity, noise and the repeater on
    every task score the latent calibration wrote, on seeds 0, 1 and 2; the flip rates carry no expectation."""
    path = get_domain("glyphs").calibration_dir / "calibration-quick.json"
    values = {
        key: controls for key, controls in json.loads(path.read_text())["values"].items() if key.startswith("latent/")
    }
    bar = CARDS["synbols_s_sharp"].bar_for("quick")
    s_sharp = {key: controls for key, controls in values.items() if _card_key(key) == "synbols_s_sharp"}
    # one task score per scenario and seed: `bex_table.py --calibrate --seeds 0 1 2`
    assert {key.split("[", 1)[1].rstrip("]") for key in s_sharp} == {
        f"{scenario}/seed{seed}"
        for scenario in ("fonts6-corr50", "fonts6-corr95", "fonts10-corr50", "fonts10-corr95")
        for seed in (0, 1, 2)
    }, sorted(s_sharp)
    for key, controls in s_sharp.items():
        assert {name: entry["expected"] for name, entry in controls.items()} == {
            "informed_search": "+",
            "latent_identity": "-",
            "latent_noise": "-",
            "latent_repeater": "-",
        }, key
        for name, entry in controls.items():
            assert bar.passes(entry["value"]) == (entry["expected"] == "+"), (key, name, entry)
    assert all(
        entry["expected"] == "" for key, controls in values.items() if key not in s_sharp for entry in controls.values()
    )
    (sentence,) = measured_evidence(get_domain("glyphs"), "synbols_s_sharp")
    assert "`python benchmarks/bex_table.py --calibrate --seeds 0 1 2`" in sentence


def test_the_attribution_evidence_shows_where_the_scores_evidence_does(capsys):
    """`cfcheck cards` and the HTML cards' rows show the per-seed values through the same functions."""
    from cfcheck.cli import main
    from cfcheck.reporting.card_evidence import scorecard_evidence

    sentences = [s for name in ("gmm", "morpho") for s in measured_evidence(get_domain(name), "road_gap")]
    assert len(sentences) == 4
    assert main(["cards", "road_gap"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("  measured:")] == [
        f"  measured:      {s}" for s in sentences
    ]
    rows = scorecard_evidence({"profile": {"name": "quick", "domains": {"morpho": {}, "gmm": {}}}}, "road_gap")
    assert rows == [(f"measured on {s.split(',', 1)[0][3:]}", s.split(", ", 1)[1]) for s in sentences]
