"""`cfcheck calibrate --domain … --kind scm --positive <renderer>` on ``scm_shapes``, an attribute
domain the project renders itself (:mod:`tests.own_domains.scm_shapes`), whose renderer is right by
construction and is named as the positive control. After calibration, fresh conformance runs read
the bars as a user's run does, and:

- the renderer passes every barred score at seeds 0, 1 and 2;
- identity fails every effectiveness bar;
- a random real image with the target attributes (the test's own adapter, not the calibration's
  control) fails every composition bar;
- each bar's rationale quotes the controls, and the scores without a bar say why.

Slow (5 controls × 3 seeds of one-thread runs, two at a time, then 5 checking runs): about 2.5
minutes on two cores; one xdist group.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.own_domains import scm_shapes

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scm_domain_calibration")]

SEEDS = (0, 1, 2)
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
ADAPTERS = Path(__file__).resolve().parents[1] / "own_domains" / "scm_adapters"
RENDERER = str(ADAPTERS / "renderer.py")


def _run(cwd: Path, method: str, spec: str, seed: int) -> list[dict]:
    """One conformance run after calibration; its scores of the domain (with their verdicts)."""
    reports = cwd / "checks" / f"{Path(method).stem}-{seed}"
    command = [sys.executable, "-m", "pytest", f"--method={method}", f"--cfcheck-domain={spec}"]
    command += ["--cfcheck-profile=quick", f"--cfcheck-seed={seed}", f"--cfcheck-report-dir={reports}"]
    command += ["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly", "--no-header"]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ONE_THREAD, check=False)
    found = sorted(reports.glob("*/scorecard.json"))
    assert found, (done.stdout + done.stderr)[-3000:]
    card = json.loads(found[0].read_text())
    assert card["profile"]["domains"]["scm_shapes"]["bars"] == "calibrated", card["profile"]["domains"]
    return [s for s in card["scores"] if s["domain"] == "scm_shapes" and s["task"] != "-"]


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scm-calibrate")
    copy = scm_shapes.materialise(folder)
    spec = f"{copy / 'domain.py'}:make_domain"
    command = [sys.executable, "-m", "cfcheck.cli", "calibrate", "--domain", spec, "--kind", "scm"]
    command += ["--positive", RENDERER, "--profile", "quick", "--out", str(folder / "runs"), "--jobs", "2"]
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, env=ONE_THREAD, check=False, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-4000:]
    bars = json.loads((copy / "bars-quick.json").read_text())
    runs = {("renderer", seed): _run(folder, RENDERER, spec, seed) for seed in SEEDS}
    runs["identity", 0] = _run(folder, "cfcheck.fixtures.scm.identity", spec, 0)
    runs["random_real", 0] = _run(folder, str(ADAPTERS / "random_real.py"), spec, 0)
    return bars, runs, done.stdout


def _barred(scores: list[dict], suite: str | None = None) -> list[dict]:
    return [s for s in scores if s["threshold"] is not None and (suite is None or s["suite"] == suite)]


def test_the_bars_are_the_scm_kinds_and_quote_the_controls(calibrated):
    bars, _, printed = calibrated
    scm = {key: entry for key, entry in bars["bars"].items() if entry["method_kind"] == "scm"}
    assert {key.split(":")[0] for key in scm} >= {
        "composition_l1",
        "effectiveness_predictor_error",
        "effectiveness_predictor_accuracy",
        "scm_fid",
    }
    for key, entry in scm.items():
        assert "renderer.py (--positive)" in entry["rationale"], key
        assert "noise" in entry["rationale"], key
    assert "identity" in scm["composition_l1:m1"]["rationale"]
    assert "random_real" in scm["effectiveness_predictor_error:size"]["rationale"]
    assert set(bars["controls"]["scm"]) >= {RENDERER, "identity", "noise", "random_real", "nearest_real"}
    assert "every control answers them all" in bars["without_bar"]["scm"]["coverage"]
    assert "| coverage | none |" in printed


@pytest.mark.parametrize("seed", SEEDS)
def test_the_renderer_passes_every_barred_score(calibrated, seed):
    scores = _barred(calibrated[1]["renderer", seed])
    assert len(scores) >= 30, len(scores)
    wrong = [
        (s["metric"], s["task"], s["verdict"], s["value"], s["threshold"]) for s in scores if s["verdict"] != "pass"
    ]
    assert not wrong, wrong


def test_identity_fails_every_effectiveness_bar(calibrated):
    scores = _barred(calibrated[1]["identity", 0], "effectiveness")
    assert {s["metric"].split(":")[1] for s in scores} == {"size", "brightness", "type"}
    assert all(s["verdict"] == "fail" for s in scores), [(s["metric"], s["verdict"]) for s in scores]


def test_a_random_real_image_with_the_target_attributes_fails_every_composition_bar(calibrated):
    scores = _barred(calibrated[1]["random_real", 0], "composition")
    assert len(scores) == 18  # 3 distances × 2 cycle counts × 3 interventions
    assert all(s["verdict"] == "fail" for s in scores), [(s["metric"], s["task"], s["verdict"]) for s in scores]
