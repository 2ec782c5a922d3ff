"""The suites tell good from bad: each bundled control gets the verdicts it exists for.

Every control runs once through every suite on the ``quick`` profile (the one method authors
gate their CI with), exactly as a user's method would, in a subprocess with one torch thread;
the assertions read its scorecard. The truth also runs at the ``standard`` profile, and the
Wachter robust-classifier finding on three seeds. ``cfcheck calibrate`` prints the same matrix.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfcheck.calibration.runs import bundled_adapter
from cfcheck.metrics.key import MetricKey

pytestmark = pytest.mark.slow

EXPLAINED = ("cnn", "robust_cnn", "mlp", "noise_cnn")
PAIR_SETS = ("ideal", "other")


def run_control(directory: Path, control: str, *args: str, pyproject: str = "") -> dict:
    """Run the bundled control ``control`` (:func:`bundled_adapter`) in ``directory``; return its scorecard."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(pyproject)
    profile = next((a.split("=", 1)[1] for a in args if a.startswith("--cfcheck-profile=")), "quick")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--method={bundled_adapter(control)}",
            f"--cfcheck-profile={profile}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-o",
            "addopts=",
            *args,
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    path = directory / "reports" / f"{control}-{profile}" / "scorecard.json"
    assert path.is_file(), completed.stdout[-3000:] + completed.stderr[-3000:]
    scorecard = json.loads(path.read_text())
    assert scorecard["status"] == "complete", completed.stdout[-3000:]
    return scorecard


def verdicts(scorecard: dict, metric: str, *, tasks: str = "") -> dict[str, str]:
    """task → verdict of ``metric`` (``key`` or ``key:variant``; a bare key matches every variant)."""
    found = {
        f"{s['metric']}@{s['task']}": s["verdict"]
        for s in scorecard["scores"]
        if (s["metric"] == metric or s["metric"].startswith(metric + ":")) and s["task"].startswith(tasks)
    }
    assert found, f"no {metric} scores recorded for tasks {tasks!r}"
    return found


def suite_verdicts(scorecard: dict, suite: str) -> dict[str, str]:
    found = {
        f"{s['metric']}@{s['task']}": s["verdict"]
        for s in scorecard["scores"]
        if s["suite"] == suite and s["verdict"] is not None
    }
    assert found, f"no {suite} verdicts recorded"
    return found


def passes(found: dict[str, str]) -> bool:
    return all(v == "pass" for v in found.values())


def none_pass(found: dict[str, str]) -> bool:
    return not any(v == "pass" for v in found.values())


def test_truth_passes_validity_closeness_realism_and_fails_random_classifier(tmp_path):
    scorecard = run_control(tmp_path, "truth")
    for suite in ("validity", "closeness", "realism"):
        found = suite_verdicts(scorecard, suite)
        assert passes(found), {k: v for k, v in found.items() if v != "pass"}
    tasks = {s["task"] for s in scorecard["scores"] if s["suite"] == "validity"}
    assert tasks == {f"{c}/{p}/seed0" for c in EXPLAINED for p in PAIR_SETS}
    # it ignores the classifier: identical explanations for the trained and the random nets
    assert none_pass(verdicts(scorecard, "randomisation_similarity"))
    assert none_pass(verdicts(scorecard, "cascading_randomisation_similarity"))
    assert none_pass(verdicts(scorecard, "ota_gain"))


def test_truth_rejecting_passes_every_suite(tmp_path):
    scorecard = run_control(tmp_path, "truth_rejecting")
    for suite in ("validity", "closeness", "realism", "random_classifier"):
        found = suite_verdicts(scorecard, suite)
        assert passes(found), {k: v for k, v in found.items() if v != "pass"}


def test_random_target_is_valid_and_realistic_but_not_close(tmp_path):
    scorecard = run_control(tmp_path, "random_target")
    assert passes(suite_verdicts(scorecard, "validity"))
    assert passes(suite_verdicts(scorecard, "realism"))
    # a different real image: unrelated attributes change on every task
    assert none_pass(verdicts(scorecard, "lvs_unrelated"))
    assert none_pass(verdicts(scorecard, "perceptual_distance"))


def test_identity_fails_validity_oracle_score_and_class_conditional_realism(tmp_path):
    scorecard = run_control(tmp_path, "identity")
    assert none_pass(verdicts(scorecard, "target_accuracy"))
    assert none_pass(verdicts(scorecard, "committee_oracle_target_accuracy"))
    os_verdicts = verdicts(scorecard, "oracle_score")
    assert set(os_verdicts.values()) == {"error"}  # no decision changed: OS is undefined, and fails
    assert none_pass(verdicts(scorecard, "fid_target"))
    assert none_pass(verdicts(scorecard, "randomisation_similarity"))


def test_noise_fails_closeness_and_realism(tmp_path):
    scorecard = run_control(tmp_path, "noise")
    for metric in ("perceptual_distance", "d1", "lvs_unrelated", "fid_target", "fid_domain", "kid_domain"):
        assert none_pass(verdicts(scorecard, metric)), metric


def test_class_mean_fails_coverage_and_fid_but_density_does_not_fail_it(tmp_path):
    """One mean image per target class: no variety, so coverage fails it conclusively on every task, as
    FID does; it lies where its class is dense, so density never fails it conclusively (the density
    cards say so). Only the realism suite runs (about a minute)."""
    scorecard = run_control(tmp_path, "class_mean", "-k", "test_realism and not autoencoder")
    for metric in ("coverage_target", "coverage_domain", "fid_target", "fid_domain"):
        assert set(verdicts(scorecard, metric).values()) == {"fail"}, metric
    for metric in ("density_target", "density_domain"):
        assert "fail" not in set(verdicts(scorecard, metric).values()), metric


def test_pgd_flips_the_classifier_but_fails_the_digit_lvs_and_committee_ota(tmp_path):
    scorecard = run_control(tmp_path, "pgd")
    assert passes(verdicts(scorecard, "target_accuracy", tasks="cnn/"))
    assert none_pass(verdicts(scorecard, "committee_oracle_target_accuracy", tasks="cnn/"))
    assert none_pass(verdicts(scorecard, "lvs_target", tasks="cnn/"))


def test_nearest_neighbour_is_valid_but_changes_unrelated_attributes(tmp_path):
    """Measured, and not what the design brief expected: the L2-nearest real image of the target
    class is closer than the truth in pixels and passes every distance bar; closeness fails it
    through the attributes it changes (fainter, thinner digits), and that same selection bias
    keeps its class-conditional realism from passing (docs/findings/controls.md, verdict matrix)."""
    scorecard = run_control(tmp_path, "nearest")
    assert passes(suite_verdicts(scorecard, "validity"))
    assert passes(verdicts(scorecard, "d1")) and passes(verdicts(scorecard, "perceptual_distance"))
    assert set(verdicts(scorecard, "d2").values()) == {None}  # reported without a bar (its card says why)
    assert none_pass(verdicts(scorecard, "lvs_unrelated:intensity"))
    assert not passes(suite_verdicts(scorecard, "realism"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wachter_is_oracle_valid_only_on_the_robust_classifier(tmp_path, seed):
    """Väth et al. H1: gradient counterfactuals flip every classifier, but only a robust
    classifier's gradients change what independent oracles see (three seeds)."""
    scorecard = run_control(
        tmp_path,
        "wachter",
        f"--cfcheck-seed={seed}",
        "-k",
        "committee_oracle_target_accuracy",
        pyproject='[tool.cfcheck]\nclassifiers = ["cnn", "robust_cnn"]\n',
    )
    committee = {s["task"]: s for s in scorecard["scores"] if s["metric"] == "committee_oracle_target_accuracy"}
    for pair_set in PAIR_SETS:
        robust = committee[f"robust_cnn/{pair_set}/seed{seed}"]
        standard = committee[f"cnn/{pair_set}/seed{seed}"]
        # the intervals do not overlap: the committee sees the target far more often on the robust cnn
        # (strict majority of three oracles: about 0.55) than on the standard one (about 0.01); both fail
        # the bar, which asks for 80 % right counterfactuals
        assert robust["ci_low"] > standard["ci_high"], (robust, standard)
        assert robust["value"] > 0.4 and standard["value"] < 0.1, (robust, standard)
        assert standard["verdict"] == "fail" and robust["verdict"] == "fail", (robust, standard)


#: the gated scores that judge whether counterfactuals are right: a share of right ones must order them
SHARE_SCORES = {
    "target_accuracy": "higher",
    "committee_oracle_target_accuracy": "higher",
    "lvs_target": "higher",
    "ground_truth_relative_error": "lower",
    "fid_target": "lower",
    "density_target": "higher",
    "coverage_target": "higher",
}
SHARES = (50, 60, 80, 95)


def test_the_bars_require_80_percent_right_counterfactuals(tmp_path):
    """Truth mixtures (the truth for a share of the inputs, the unchanged input for the rest): every gated
    validity, ground-truth and target-class realism score orders them by share on every task, the 50 % and
    60 % mixtures pass none of them (density and coverage to the target class included: they are means over
    counterfactuals, or follow the share), the 95 % one passes every one of them. Seed 0; tests/
    test_bars_on_every_seed.py checks the 60 % and 95 % mixtures' verdicts on seeds 0, 1 and 2 in the
    calibration file."""
    found = {}
    for share in SHARES:
        scorecard = run_control(
            tmp_path / str(share),
            f"truth_mixture_{share}",
            "-k",
            "validity or fid_target or density_target or coverage_target or ground_truth_relative",
        )
        found[share] = {(MetricKey.parse(s["metric"]).card, s["task"]): s for s in scorecard["scores"]}
    for metric, task in found[50]:
        if metric not in SHARE_SCORES:
            continue
        values = [found[share][metric, task]["value"] for share in SHARES]
        ordered = sorted(values, reverse=SHARE_SCORES[metric] == "lower")  # better as the share grows
        assert values == ordered, (metric, task, values)
        for share in (50, 60):
            assert found[share][metric, task]["verdict"] != "pass", (share, metric, task, found[share][metric, task])
        assert found[95][metric, task]["verdict"] == "pass", (metric, task, found[95][metric, task])
    assert {m for m, _ in found[50]} >= set(SHARE_SCORES)


def test_truth_passes_at_the_standard_profile(tmp_path):
    scorecard = run_control(
        tmp_path, "truth", "--cfcheck-profile=standard", "-k", "vce and (validity or closeness or realism)"
    )
    for suite in ("validity", "closeness", "realism"):
        found = suite_verdicts(scorecard, suite)
        assert passes(found), {k: v for k, v in found.items() if v != "pass"}
    assert {s["task"].rsplit("/", 1)[1] for s in scorecard["scores"]} == {"seed0", "seed1"}


def test_dvce_reaches_the_target_on_the_hardest_pairs(tmp_path):
    """The DVCE fixture (guidance 1.5) passes every validity bar of the quick profile (docs/findings/controls.md's
    matrix); at 1.0 the robust and noise-trained CNNs' "other" pairs kept only 0.83 and 0.85
    after the rejection step, inconclusive at the 0.8 bar. Re-checked on those two tasks."""
    scorecard = run_control(tmp_path, "dvce", "-k", "test_target_accuracy and other and (robust_cnn or noise_cnn)")
    found = verdicts(scorecard, "target_accuracy")
    assert sorted(found) == ["target_accuracy@noise_cnn/other/seed0", "target_accuracy@robust_cnn/other/seed0"]
    assert passes(found), found


SCM_SUITES = ("effectiveness", "causal_graph", "realism")


def test_scm_controls_get_the_verdicts_they_exist_for(tmp_path):
    """The SCM truth passes composition, effectiveness and causal-graph compliance; identity passes
    composition and fails effectiveness (and the intensity under do(thickness)); the resampler (same
    parents, another style) is effective but fails composition; noise fails everything. Realism:
    the truth and the resampler are real images with the counterfactual parents; identity shows
    the wrong digits under do(digit)."""
    found = {c: run_control(tmp_path / c, c) for c in ("scm_truth", "scm_identity", "scm_resample", "scm_noise")}
    for control, suite in (("scm_truth", "composition"), ("scm_identity", "composition")):
        assert passes(suite_verdicts(found[control], suite)), control
    assert none_pass(suite_verdicts(found["scm_resample"], "composition"))
    assert none_pass(suite_verdicts(found["scm_noise"], "composition"))
    for control in ("scm_truth", "scm_resample"):
        for suite in SCM_SUITES:
            # realism included: at the quick profile's 100 inputs per intervention (10 per digit) KID's
            # half-sampling CI is narrow enough (at 60 the truth's do(thickness) KID was inconclusive)
            verdicts_ = suite_verdicts(found[control], suite)
            assert passes(verdicts_), (control, {k: v for k, v in verdicts_.items() if v != "pass"})
    assert none_pass(suite_verdicts(found["scm_identity"], "effectiveness"))
    assert verdicts(found["scm_identity"], "scm_fid", tasks="do_digit") == {"scm_fid@do_digit/seed0": "fail"}
    assert verdicts(found["scm_identity"], "preservation_error:intensity", tasks="do_thickness") == {
        "preservation_error:intensity@do_thickness/seed0": "fail"
    }
    for suite in SCM_SUITES:
        assert none_pass(suite_verdicts(found["scm_noise"], suite))
    # the resampler is no counterfactual of its input: farther from the truth than identity
    error = {
        c: {s["task"]: s["value"] for s in found[c]["scores"] if s["metric"] == "ground_truth_error"}
        for c in ("scm_resample", "scm_identity", "scm_truth")
    }
    assert all(error["scm_truth"][t] == 0 for t in error["scm_truth"])
    assert all(error["scm_resample"][t] > error["scm_identity"][t] for t in error["scm_identity"])
    # CLD has no bar (truth and identity are not separated) but orders the changes: an unchanged image
    # scores log(0.8 + 0.2e) (div = 0), the truth at most that, the resampler and noise above
    cld = {c: {s["task"]: s["value"] for s in found[c]["scores"] if s["metric"] == "cld"} for c in found}
    assert all(v == pytest.approx(math.log(0.8 + 0.2 * math.e)) for v in cld["scm_identity"].values())
    for task, truth in cld["scm_truth"].items():
        assert truth <= cld["scm_identity"][task] + 1e-9 < cld["scm_resample"][task] < cld["scm_noise"][task], task


def test_scm_reference_generators_get_the_verdicts_readme_reports(tmp_path):
    """The SCM generator table of docs/findings/scm.md, asserted: the VAE (pixel noise abducted) passes every bar but
    two, its thickness error under do(thickness) read off the image (0.47 sd against 0.5) and its
    KID under do(digit) (0.55 against floor + 1 = 1.01, the half-sampling interval reaching 1.14),
    both inconclusive; the HVAE composes exactly and is effective, but its do(digit)
    counterfactuals fail realism (FID 50.6 against 2 × floor = 25.1) while do(thickness) and
    do(intensity) pass it; the GAN as below."""
    vae = run_control(tmp_path / "scm_vae", "scm_vae")
    for suite in ("composition", "causal_graph"):
        assert passes(suite_verdicts(vae, suite)), (
            suite,
            {k: v for k, v in suite_verdicts(vae, suite).items() if v != "pass"},
        )
    assert {k: v for k, v in suite_verdicts(vae, "realism").items() if v != "pass"} == {
        "scm_kid@do_digit/seed0": "inconclusive"
    }
    assert {k for k, v in suite_verdicts(vae, "effectiveness").items() if v != "pass"} == {
        "effectiveness_error:thickness@do_thickness/seed0"
    }
    hvae = run_control(tmp_path / "scm_hvae", "scm_hvae")
    assert passes(suite_verdicts(hvae, "composition"))
    for suite in ("effectiveness", "causal_graph"):
        assert "fail" not in suite_verdicts(hvae, suite).values(), (suite, suite_verdicts(hvae, suite))
    assert verdicts(hvae, "scm_fid") == {
        "scm_fid@do_digit/seed0": "fail",
        "scm_fid@do_intensity/seed0": "pass",
        "scm_fid@do_thickness/seed0": "pass",
    }
    # the GAN (no pixel noise to abduct: composing costs its reconstruction error) composes once
    # within the pixel and perceptual bars, drifts past every bar over 10 cycles; it never fails
    # effectiveness or the causal graph; its do(digit) images fail FID (45.3 against 25.1; KID
    # there is inconclusive: 9.0 with a half-sampling interval from -0.35 to 14.9)
    gan = run_control(tmp_path / "scm_gan", "scm_gan")
    composition = suite_verdicts(gan, "composition")
    assert {k for k, v in composition.items() if v == "pass"} == {
        f"composition_{d}:m1@do_{p}/seed0" for d in ("l1", "perceptual") for p in ("digit", "intensity", "thickness")
    }
    assert set(composition.values()) == {"pass", "fail"}
    for suite in ("effectiveness", "causal_graph"):
        assert "fail" not in suite_verdicts(gan, suite).values(), (suite, suite_verdicts(gan, suite))
    assert verdicts(gan, "scm_fid", tasks="do_digit")["scm_fid@do_digit/seed0"] == "fail"
    assert verdicts(gan, "scm_kid", tasks="do_digit")["scm_kid@do_digit/seed0"] != "pass"
    assert verdicts(gan, "scm_fid", tasks="do_thickness")["scm_fid@do_thickness/seed0"] == "pass"
