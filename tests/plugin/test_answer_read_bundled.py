"""Of cfcheck's bundled methods and controls, exactly those built on the domain's true counterfactual
(the truth controls, the truth mixtures) are flagged as having read the answer (issue 43, item 5).

Each adapter runs one test of its kind that scores one task (its fixture builds it, it is called on
the task's inputs) at the tiny profile of tests/plugin/conftest.py. The methods most likely to
touch a domain's internals (the nearest neighbour, the random real image, the class mean, the SCM
resampler) and one cheap control per kind run always; the rest of the adapters (diffusion, generative
SCMs, latent searches: minutes on a CPU) are marked slow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: per kind, one cheap test that records a score on one task (a run without a score writes no scorecard)
ONE_TASK = {
    "vce": "vce and test_coverage",
    "scm": "scm and test_ground_truth_error and do_digit",
    "attribution": "attribution and test_road and morpho and morf",  # (cf_wachter explains images only)
    "latent": "latent and test_coverage",
}
#: adapters whose output contract runs in seconds
QUICK = {
    "vce.identity",
    "vce.nearest",
    "vce.random_target",
    "vce.class_mean",
    "vce.truth",
    "vce.truth_rejecting",
    "vce.truth_mixture_80",
    "scm.identity",
    "scm.resample",
    "scm.truth",
    "attribution.random_saliency",
    "latent.identity",
}
#: the mixture control wraps another method named in an environment variable (checked on its own)
NEEDS_SETUP = {"vce.mixture"}


def _adapters() -> list[str]:
    return sorted(
        f"{path.parent.name}.{path.stem}"
        for path in FIXTURES.glob("*/*.py")
        if path.stem != "__init__" and f"{path.parent.name}.{path.stem}" not in NEEDS_SETUP
    )


#: SCM calibration controls that look real images up by the counterfactual parents the domain propagates: on
#: a domain whose SCM is the truth (the bundled one) those parents are the answer's factors, so they are flagged
#: there; on a user's attribute domain they are a public model's output and are not (test_answer_read.py)
READS_PROPAGATED_PARENTS = {"scm.nearest_real", "scm.random_real"}


def _reads_by_design(adapter: str) -> bool:
    """The controls built on the true counterfactual (vce.truth, vce.truth_rejecting, vce.truth_mixture_*, scm.truth)
    and those reading the true SCM's counterfactual parents (:data:`READS_PROPAGATED_PARENTS`)."""
    return adapter.split(".")[1].startswith("truth") or adapter in READS_PROPAGATED_PARENTS


def _answer_read(tiny, result) -> dict | None:
    (card,) = list((tiny.path / "reports").glob("*/scorecard.json"))
    assert result.parseoutcomes().get("passed", 0) >= 1, result.stdout.str()[-2000:]
    return json.loads(card.read_text())["provenance"]["answer_read"]


@pytest.mark.parametrize("adapter", [a if a in QUICK else pytest.param(a, marks=pytest.mark.slow) for a in _adapters()])
def test_only_the_bundled_truth_controls_read_the_answer(tiny, monkeypatch, adapter):
    if adapter == "attribution.captum_integrated_gradients":
        pytest.importorskip("captum.attr")  # the optional captum extra
    monkeypatch.setenv("CFCHECK_PGD_EPS", "0.03")  # the sized attack's budget (vce.pgd_sized)
    selection = ONE_TASK[adapter.split(".")[0]]
    read = _answer_read(
        tiny, tiny.runpytest(f"--method=cfcheck.fixtures.{adapter}", "-p", "no:randomly", "-k", selection)
    )
    if _reads_by_design(adapter):
        assert read is not None and read["calls"] >= 1, read
    else:
        assert read is None, f"{adapter} read {read}"


def test_every_bundled_truth_control_is_in_the_quick_set():
    assert {"vce.truth", "vce.truth_rejecting", "scm.truth"} <= QUICK
    assert {a for a in _adapters() if _reads_by_design(a)} >= {"vce.truth", "scm.truth"}


@pytest.mark.parametrize(("positive", "flagged"), [("vce.nearest", False), ("vce.truth", True)])
def test_the_mixture_reads_the_answer_where_its_positive_does(tiny, monkeypatch, positive, flagged):
    monkeypatch.setenv("CFCHECK_MIXTURE_OF", f"cfcheck.fixtures.{positive}")
    result = tiny.runpytest("--method=cfcheck.fixtures.vce.mixture", "-p", "no:randomly", "-k", ONE_TASK["vce"])
    read = _answer_read(tiny, result)
    assert (read is not None) == flagged, read
