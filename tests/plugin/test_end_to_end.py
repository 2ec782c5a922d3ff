"""The plugin end to end, driven through pytester on a tiny profile (bundled models, real suites)."""

from __future__ import annotations

import json

import pytest

README_ADAPTER = """
import pytest

class MyMethod:
    def explain(self, x, target, classifier):   # x: float32 N×1×32×32 in [0,1]; target: int64 N
        return x.clone()                         # same shape, in [0,1]

@pytest.fixture
def cf_method():
    return MyMethod()
"""


def _scores(scorecard, metric):
    return [s for s in scorecard["scores"] if s["metric"] == metric]


def test_readme_adapter_runs_and_writes_a_scorecard(tiny, scorecard_of):
    tiny.makepyfile(my_adapter=README_ADAPTER)
    result = tiny.runpytest("--method=my_adapter", "-p", "no:randomly")
    # the scorecard's path, then its banner (the identity's target accuracy fails its bar)
    result.stdout.fnmatch_lines(
        ["*scorecard: *my_adapter-standard*scorecard.json*", "FAIL: * suites have failing scores*"]
    )
    scorecard = scorecard_of("my_adapter")
    assert scorecard["status"] == "complete"
    (accuracy,) = _scores(scorecard, "target_accuracy")
    assert accuracy["value"] == 0.0 and accuracy["passed"] is False and accuracy["n"] == 20
    assert scorecard["provenance"]["reference_models"]["morpho/cnn"]
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 1 and outcomes["passed"] >= 1
    for name in ("scorecard.md", "scorecard.html", "samples.csv"):
        assert (tiny.path / "reports" / "my_adapter-standard" / name).is_file()


def test_path_and_object_spellings_of_method(tiny, scorecard_of):
    tiny.makepyfile(my_adapter=README_ADAPTER)
    by_path = tiny.runpytest(f"--method={tiny.path / 'my_adapter.py'}", "-k", "test_target_accuracy")
    by_path.assert_outcomes(failed=1)
    by_object = tiny.runpytest("--method=my_adapter:MyMethod", "-k", "test_target_accuracy")
    by_object.assert_outcomes(failed=1)
    assert scorecard_of("my_adapter-MyMethod")["method"] == "my_adapter:MyMethod"


def test_a_crashing_method_fails_its_tests_not_the_session(tiny, scorecard_of):
    tiny.makepyfile(
        crashing="""
import pytest

class Crashing:
    def explain(self, x, target, classifier):
        raise RuntimeError("gradient exploded")

@pytest.fixture
def cf_method():
    return Crashing()
"""
    )
    result = tiny.runpytest("--method=crashing", "-k", "test_validity")
    result.stdout.fnmatch_lines(["*explain raised RuntimeError: gradient exploded*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert scorecard_of("crashing")["status"] == "complete"


def test_nan_outputs_are_reported_precisely(tiny):
    tiny.makepyfile(
        nan_method="""
import pytest, torch

class NaNs:
    def explain(self, x, target, classifier):
        return torch.full_like(x, float("nan"))

@pytest.fixture
def cf_method():
    return NaNs()
"""
    )
    result = tiny.runpytest("--method=nan_method", "-k", "vce and (test_target_accuracy or test_output_contract)")
    result.stdout.fnmatch_lines(["*NaN or Inf values for 10 of 10 inputs*"])
    # the contract test fails; so does the scoring test, which gets no counterfactuals
    result.assert_outcomes(failed=2)


def test_interrupted_run_writes_an_incomplete_scorecard(tiny, scorecard_of):
    tiny.makepyfile(
        interrupting="""
import pytest

class Interrupting:
    def explain(self, x, target, classifier):
        raise KeyboardInterrupt

@pytest.fixture
def cf_method():
    return Interrupting()
"""
    )
    result = tiny.runpytest_subprocess("--method=interrupting", "-k", "test_target_accuracy")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert scorecard_of("interrupting")["status"] == "incomplete"


def test_baseline_regressions_fail_as_ordinary_tests(tiny):
    tiny.makepyfile(my_adapter=README_ADAPTER)
    tiny.runpytest("--method=my_adapter", "-k", "vce and test_coverage", "--cfcheck-save-baseline=base.json")
    baseline = json.loads((tiny.path / "base.json").read_text())
    (coverage,) = _scores(baseline, "coverage")
    assert coverage["value"] == 1.0
    # a method that abstains everywhere regresses on coverage against that baseline
    tiny.makepyfile(
        abstaining="""
import pytest, torch

class Abstaining:
    def explain(self, x, target, classifier):
        return x.clone(), torch.zeros(len(x), dtype=torch.bool)

@pytest.fixture
def cf_method():
    return Abstaining()
"""
    )
    result = tiny.runpytest("--method=abstaining", "-k", "vce and test_coverage", "--cfcheck-baseline=base.json")
    result.stdout.fnmatch_lines(["*coverage*regressed: 0 is lower than the baseline 1 by more than the tolerance*"])
    result.assert_outcomes(failed=1)


def test_xdist_workers_merge_into_one_scorecard(tiny, scorecard_of):
    tiny.makepyfile(my_adapter=README_ADAPTER)
    tiny.runpytest("--method=my_adapter", "-k", "vce and validity")
    serial = scorecard_of("my_adapter")
    result = tiny.runpytest_subprocess("--method=my_adapter", "-k", "vce and validity", "-n", "2")
    parallel = scorecard_of("my_adapter")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    key = lambda s: (s["metric"], s["task"])  # noqa: E731
    assert sorted(map(key, serial["scores"])) == sorted(map(key, parallel["scores"]))
    assert {key(s): s["value"] for s in serial["scores"]} == {key(s): s["value"] for s in parallel["scores"]}
    assert serial["provenance"]["devices"] == {"main": "cpu"}
    assert parallel["provenance"]["devices"] == {"gw0": "cpu", "gw1": "cpu"}  # each worker's own device


def test_suites_collected_without_method_are_skipped(pytester):
    result = pytester.runpytest("--pyargs", "cfcheck.suites", "-q", "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) >= 1 and "failed" not in outcomes


def test_several_counterfactuals_per_input_are_scored_for_diversity(tiny, scorecard_of):
    tiny.makepyfile(
        several="""
import pytest, torch

class Several:
    def explain(self, x, target, classifier, generator=None):
        noise = torch.rand((len(x), 3, *x.shape[1:]), generator=generator) * 0.2
        return (x.unsqueeze(1) + noise).clamp(0, 1)

@pytest.fixture
def cf_method():
    return Several()
"""
    )
    tiny.runpytest("--method=several", "-k", "test_diversity or test_perceptual_distance")
    scorecard = scorecard_of("several")
    (diversity,) = _scores(scorecard, "diversity")
    (closeness,) = _scores(scorecard, "perceptual_distance")
    assert diversity["value"] > 0 and diversity["n"] == 20
    assert closeness["n"] == 20


GUIDED = """
import pytest

class Guided:
    def __init__(self, guide):
        self.guide = guide

    def explain(self, x, target, classifier):
        return x.clone()

@pytest.fixture
def cf_method(cfcheck_models):
    return Guided(cfcheck_models[{name!r}])
"""


def test_methods_may_load_explained_classifiers_but_not_evaluation_models(tiny):
    tiny.makepyfile(guided_ok=GUIDED.format(name="robust_cnn"), guided_oracle=GUIDED.format(name="oracle_resnet"))
    tiny.runpytest("--method=guided_ok", "-k", "vce and test_coverage").assert_outcomes(passed=1)
    result = tiny.runpytest("--method=guided_oracle", "-k", "vce and test_coverage")
    result.stdout.fnmatch_lines(["*'oracle_resnet' is an evaluation model (oracles) that scores the method*"])
    assert result.ret != 0


def test_method_model_view_lists_the_explained_classifiers_and_the_generative_priors():
    import torch

    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import MethodModels, ModelZoo

    view = MethodModels(ModelZoo(get_domain("morpho"), torch.device("cpu")))
    # the SCM generators' flows, VAE, HVAE and GAN are priors a method may build on, like the DDPM
    assert set(view.names()) == {
        "cnn",
        "robust_cnn",
        "mlp",
        "noise_cnn",
        "random_net",
        "ddpm",
        "thickness_flow",
        "intensity_flow",
        "cvae",
        "chvae",
        "cgan",
    }
    for name in ("oracle_lenet", "attr_digit", "embedding", "ae_class3"):  # the IM1/IM2 autoencoders judge too
        with pytest.raises(KeyError, match="evaluation model"):
            view[name]


def test_junit_reports_carry_each_score(tiny):
    import xml.etree.ElementTree as ElementTree

    tiny.makepyfile(my_adapter=README_ADAPTER)
    tiny.runpytest(
        "--method=my_adapter", "-k", "vce and (test_coverage or test_target_accuracy)", "--junitxml=junit.xml"
    )
    cases = {case.get("name"): case for case in ElementTree.parse(tiny.path / "junit.xml").iter("testcase")}
    properties = {
        p.get("name"): p.get("value") for p in cases["test_target_accuracy[cnn-ideal-seed0]"].iter("property")
    }
    assert properties["cfcheck.target_accuracy.value"] == "0.0"  # the unchanged input is never the target
    assert properties["cfcheck.target_accuracy.verdict"] == "fail"
    assert properties["cfcheck.target_accuracy.bar"] == ">= 0.8"
    assert (
        properties["cfcheck.target_accuracy.n"] == "20"
        and properties["cfcheck.target_accuracy.task"] == "cnn/ideal/seed0"
    )
    assert float(properties["cfcheck.target_accuracy.ci_high"]) > 0
    coverage = {p.get("name"): p.get("value") for p in cases["test_coverage[cnn-ideal-seed0]"].iter("property")}
    assert coverage["cfcheck.coverage.value"] == "1.0" and "cfcheck.coverage.verdict" not in coverage  # no bar
