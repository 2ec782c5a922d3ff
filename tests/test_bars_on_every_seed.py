"""Every bundled bar holds on seeds 0, 1 and 2: in morpho's calibration file (``cfcheck calibrate
--seeds 0 1 2`` and ``cfcheck calibrate --seeds 0 1 2 --methods scm_truth scm_identity scm_resample
scm_noise``), every control expected to pass a suite passed each of its scores with a bar, on every
seed, and every control expected to fail it did not pass, but for the listed exceptions, each of
which the card's rationale states. The verdicts are the runs' own (intervals included, so an
inconclusive positive control counts against the bar); each was judged under the bar the card
holds now, or the file is stale and the test says to recalibrate."""

from __future__ import annotations

import json
import re

import pytest

from cfcheck.domains import get_domain
from cfcheck.metrics.cards import CARDS
from cfcheck.metrics.key import MetricKey

SEEDS = {0, 1, 2}

_NEAREST = "the L2-nearest real image is closer than the truth in pixels"
_IDENTITY_REAL = (
    "the unchanged input is a real image, so domain-wide realism passes it; the target-class scores fail it"
)
_IDENTITY_KEEPS = (
    "identity keeps every parent: it fails only on a parent the causal graph moves and passes on those "
    "the intervention leaves alone; effectiveness fails it"
)
_SCM_IDENTITY_REAL = "the unchanged input is a real image of its own parents; effectiveness fails it"

#: (card, control) → why the control goes against its suite's expectation on that card (on some seed)
EXCEPTIONS = {
    ("target_accuracy", "pgd"): "targeted PGD flips f by construction; the committee's OTA fails it",
    ("d1", "nearest"): _NEAREST,
    ("d1_5", "nearest"): _NEAREST,
    ("elastic_net", "nearest"): _NEAREST,
    ("perceptual_distance", "nearest"): "the domain network sees the nearest real image as close as the truth",
    ("ota_gain", "identity"): "identity changes no input, so gains nothing; randomisation_similarity fails it",
    ("fid_domain", "identity"): _IDENTITY_REAL,
    ("kid_domain", "identity"): _IDENTITY_REAL,
    ("density_domain", "identity"): _IDENTITY_REAL,
    ("coverage_domain", "identity"): _IDENTITY_REAL,
    ("density_target", "class_mean"): "a class's mean image lies where its class is dense; coverage fails it",
    ("density_domain", "class_mean"): "a class's mean image lies where its class is dense; coverage fails it",
    ("preservation_error", "scm_identity"): _IDENTITY_KEEPS,
    ("preservation_predictor_error", "scm_identity"): _IDENTITY_KEEPS,
    ("preservation_accuracy", "scm_identity"): "the digit descends from no intervened parent: keeping it is right",
    ("preservation_predictor_accuracy", "scm_identity"): "the digit descends from no intervened parent: keeping it "
    "is right",
    ("scm_fid", "scm_identity"): _SCM_IDENTITY_REAL,
    ("scm_kid", "scm_identity"): _SCM_IDENTITY_REAL,
}
#: how each card's rationale names the control of an exception
_CONTROL_WORDS = {
    "pgd": "PGD",
    "nearest": "nearest",
    "identity": "dentity",
    "scm_identity": "identity",
    "class_mean": "class_mean",
}


def _values():
    path = get_domain("morpho").calibration_dir / "calibration-quick.json"
    return path, json.loads(path.read_text())["values"]


def _card_key(identity):
    return MetricKey.parse(identity.split("/", 3)[3].split("[", 1)[0]).card


def _seed(identity):
    found = re.search(r"seed(\d+)\]$", identity)
    assert found, f"{identity}: a task id names its seed"
    return int(found.group(1))


@pytest.mark.parametrize("kind", ["vce", "scm"])
def test_the_calibration_covers_three_seeds(kind):
    path, values = _values()
    seeds = {_seed(identity) for identity in values if identity.startswith(f"{kind}/")}
    assert seeds == SEEDS, f"{path}: {kind} values of seeds {sorted(seeds)}; run `cfcheck calibrate --seeds 0 1 2`"


def test_every_bar_lets_its_controls_show_what_they_exist_to_show_on_every_seed():
    path, values = _values()
    against: dict[tuple[str, str], set[int]] = {}
    judged = 0
    for identity, controls in values.items():
        card = CARDS.get(_card_key(identity))
        for control, entry in controls.items():
            if "verdict" not in entry:
                continue
            bar = card.bar_for("quick") if card is not None else None
            assert bar is not None and str(entry["threshold"]).startswith(bar.describe()), (
                f"{path}: {identity} {control} was judged against {entry['threshold']!r}, the card's bar is "
                f"{bar.describe() if bar else None!r}: recalibrate (`cfcheck calibrate --seeds 0 1 2`)"
            )
            judged += 1
            sign, verdict = entry["expected"], entry["verdict"]
            if (sign == "+" and verdict != "pass") or (sign == "-" and verdict == "pass"):
                against.setdefault((card.key, control), set()).add(_seed(identity))
    assert judged > 1000, f"{path} holds {judged} verdicts"
    assert set(against) == set(EXCEPTIONS), {
        key: sorted(seeds) for key, seeds in against.items() if key not in EXCEPTIONS
    }  # a stale exception fails too
    for (key, control), _ in EXCEPTIONS.items():
        rationale = CARDS[key].rationale or ""
        assert _CONTROL_WORDS[control] in rationale and "pass" in rationale, (key, control, rationale)


#: the cards that judge whether counterfactuals are right: the gated validity scores and the target-class
#: fidelity scores (kid_target has no bar: its card says why)
SHARE_CARDS = (
    "target_accuracy",
    "committee_oracle_target_accuracy",
    "lvs_target",
    "fid_target",
    "density_target",
    "coverage_target",
)


def test_a_60_percent_truth_mixture_passes_no_share_bar_and_a_95_percent_one_fails_none_on_every_seed():
    """The bars state the share of right counterfactuals they ask for (80 %): in morpho's calibration file, the
    truth mixture right on 60 % of its inputs passes no gated validity or target-class fidelity score on any
    task of seeds 0, 1 and 2 (density and coverage included), and the one right on 95 % fails none."""
    path, values = _values()
    judged: dict[str, set[tuple[str, int]]] = {"truth_mixture_60": set(), "truth_mixture_95": set()}
    wrong = []
    for identity, controls in values.items():
        key = _card_key(identity)
        if not identity.startswith("vce/") or key not in SHARE_CARDS:
            continue
        for control, bad in (("truth_mixture_60", "pass"), ("truth_mixture_95", "fail")):
            entry = controls.get(control, {})
            assert "verdict" in entry, (
                f"{path}: no {control} verdict on {identity}: recalibrate (`cfcheck calibrate --seeds 0 1 2`)"
            )
            judged[control].add((key, _seed(identity)))
            if entry["verdict"] == bad:
                wrong.append((identity, control, entry))
    for control, seen in judged.items():
        assert seen == {(key, seed) for key in SHARE_CARDS for seed in SEEDS}, (control, sorted(seen))
    assert not wrong, wrong
