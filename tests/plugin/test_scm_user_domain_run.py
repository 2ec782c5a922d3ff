"""The SCM suites end to end on a user's attribute-labelled domain: ``scm_shapes``, grey shapes the
project renders itself (size → brightness, type a root; :mod:`tests.own_domains.scm_shapes`), with
generators whose behaviour is known by construction (:mod:`tests.own_domains.scm_methods`): the
domain's renderer (right by construction), identity, noise, a random real image with the target
attributes, and a shape with everything redrawn. Also ``scm_colour`` (RGB, a shape of four values →
size → hue and shape → hue, every mechanism fitted by cfcheck; :mod:`tests.own_domains.scm_colour`)
with its renderer, identity and a random real image.

The domain is uncalibrated, so every score is recorded without a verdict; the ground-truth scores
are skipped because real data has no true counterfactual; a role map without the SCM roles skips
what needs them, saying which role. The orderings the suites must show: the renderer is more
effective than identity, identity composes better than a random real image, the renderer keeps the
non-descendants of the intervened attribute better than a method that changes everything, and
noise is far less realistic than the renderer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.own_domains import scm_colour, scm_shapes

ADAPTERS = Path(__file__).resolve().parents[1] / "own_domains" / "scm_adapters"
METHODS = {
    "renderer": str(ADAPTERS / "renderer.py"),
    "identity": "cfcheck.fixtures.scm.identity",
    "noise": "cfcheck.fixtures.scm.noise",
    "random_real": str(ADAPTERS / "random_real.py"),
    "scramble": str(ADAPTERS / "scramble.py"),
}
#: where each run files its reports (the adapters' cfcheck_name)
REPORTS = {
    "renderer": "shapes_renderer",
    "identity": "scm_identity",
    "noise": "scm_noise",
    "random_real": "shapes_random_real",
    "scramble": "shapes_scramble",
}
SETTINGS = """
[tool.cfcheck]
domains = ["{spec}"]
profile = "quick"
bootstrap_resamples = 200

[tool.cfcheck.scm]
n_inputs = 60
"""
#: the graph's non-descendants of each intervened attribute (size → brightness; type a root)
NON_DESCENDANTS = {"size": ("type",), "brightness": ("size", "type"), "type": ("size", "brightness")}
TASKS = tuple(f"do_{factor}/seed0" for factor in NON_DESCENDANTS)
COLOUR_METHODS = {
    "renderer": str(ADAPTERS / "colour_renderer.py"),
    "identity": METHODS["identity"],
    "random_real": str(ADAPTERS / "colour_random_real.py"),
}
COLOUR_REPORTS = {"renderer": "colour_renderer", "identity": "scm_identity", "random_real": "colour_random_real"}
#: each domain's runs (a fixture), its continuous attributes and its categorical one
DOMAINS = {
    "scm_shapes": ("runs", ("size", "brightness"), "type"),
    "scm_colour": ("colour_runs", ("size", "hue"), "shape"),
}


def _run(folder: Path, method: str, *extra: str) -> subprocess.CompletedProcess:
    """``pytest --method=...`` in a user's folder, as its own process on one thread (as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", f"--method={method}", "-p", "no:randomly", "-p", "no:xdist", "-rs", *extra],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def _runs(folder: Path, module, methods: dict[str, str], reports: dict[str, str]) -> dict:
    """Each method's scores by (metric, task), its pytest output and scorecard, from one run each."""
    (folder / "pyproject.toml").write_text(SETTINGS.format(spec=f"{module.build() / 'domain.py'}:make_domain"))
    found = {}
    for name, method in methods.items():
        result = _run(folder, method)
        path = folder / "reports" / f"{reports[name]}-quick" / "scorecard.json"
        assert path.is_file(), (name, result.stdout[-3000:], result.stderr[-3000:])
        card = json.loads(path.read_text())
        found[name] = ({(s["metric"], s["task"]): s for s in card["scores"]}, result, card)
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("user"), scm_shapes, METHODS, REPORTS)


@pytest.fixture(scope="module")
def colour_runs(tmp_path_factory):
    return _runs(tmp_path_factory.mktemp("colour"), scm_colour, COLOUR_METHODS, COLOUR_REPORTS)


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_suites_run_without_verdicts_and_skip_the_ground_truth_with_the_reason(request, domain):
    for name, (scores, result, card) in request.getfixturevalue(DOMAINS[domain][0]).items():
        assert result.returncode == 0, (name, result.stdout[-3000:])
        assert card["profile"]["domains"][domain]["bars"] == "uncalibrated"
        assert scores and all(s["verdict"] is None for s in scores.values()), name
        assert {s["suite"] for s in scores.values()} >= {
            "composition",
            "effectiveness",
            "causal_graph",
            "realism",
            "minimality",
        }
        assert "real data has no true counterfactual" in result.stdout, name
        assert not any(metric.startswith("ground_truth") for metric, _ in scores), name


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_renderer_is_effective_and_identity_is_not(request, domain):
    which, continuous, discrete = DOMAINS[domain]
    runs = request.getfixturevalue(which)
    renderer, identity = runs["renderer"][0], runs["identity"][0]
    for factor in continuous:
        key = (f"effectiveness_predictor_error:{factor}", f"do_{factor}/seed0")
        assert renderer[key]["ci_high"] < identity[key]["ci_low"], (renderer[key], identity[key])
    key = (f"effectiveness_predictor_accuracy:{discrete}", f"do_{discrete}/seed0")
    assert renderer[key]["ci_low"] > identity[key]["ci_high"], (renderer[key], identity[key])


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("metric", ["composition_l1", "composition_perceptual", "composition_embedding"])
def test_identity_composes_better_than_a_random_real_image(request, domain, metric):
    which, continuous, discrete = DOMAINS[domain]
    runs = request.getfixturevalue(which)
    identity, random_real = runs["identity"][0], runs["random_real"][0]
    for task in (f"do_{factor}/seed0" for factor in (*continuous, discrete)):
        for cycles in ("m1", "m10"):
            key = (f"{metric}:{cycles}", task)
            assert identity[key]["value"] == 0.0 < random_real[key]["ci_low"], (identity[key], random_real[key])


def test_the_renderer_keeps_the_non_descendants_better_than_a_method_that_changes_everything(runs):
    renderer, scramble = runs["renderer"][0], runs["scramble"][0]
    for factor, kept in NON_DESCENDANTS.items():
        for parent in kept:
            kind = "accuracy" if parent == "type" else "error"
            key = (f"preservation_predictor_{kind}:{parent}", f"do_{factor}/seed0")
            better, worse = renderer[key], scramble[key]
            if kind == "error":
                assert better["ci_high"] < worse["ci_low"], (key, better, worse)
            else:
                assert better["ci_low"] > worse["ci_high"], (key, better, worse)


def test_noise_is_far_less_realistic_than_the_renderer(runs):
    renderer, noise = runs["renderer"][0], runs["noise"][0]
    for task in TASKS:
        assert noise[("scm_fid", task)]["value"] > 10 * renderer[("scm_fid", task)]["value"], task
        assert "reference_exact_match" in renderer[("scm_fid", task)]["extra"]


def test_a_domain_without_the_scm_roles_skips_what_needs_them_saying_which_role(tmp_path):
    spec = f"{scm_shapes.build() / 'domain.py'}:without_scm_roles"
    (tmp_path / "pyproject.toml").write_text(SETTINGS.format(spec=spec))
    result = _run(tmp_path, METHODS["identity"], "-k", "not realism")
    text = result.stdout
    assert result.returncode == 0, text[-3000:]
    assert "declares no anti-causal predictor of 'size' (role 'anticausal_predictors'" in text
    assert "declares no minimality VAE (role 'minimality_vae')" in text
    assert "real data has no true counterfactual" in text
    scores = json.loads((tmp_path / "reports" / "scm_identity-quick" / "scorecard.json").read_text())["scores"]
    assert {s["metric"] for s in scores} >= {"composition_l1:m1", "composition_perceptual:m10", "coverage"}
    assert not any(s["metric"].startswith(("effectiveness", "preservation", "cld")) for s in scores)
