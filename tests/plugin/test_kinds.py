"""The engine runs every method kind: small SCM and attribution adapters get their contract
suites, scores and scorecard; latent methods and unbuilt suites are skipped with a reason; the
suites of other kinds are deselected where the method's kind is known up front."""

from __future__ import annotations

import pytest

SCM_IDENTITY = """
import pytest

class Unchanged:
    def counterfactual(self, x, parents, intervention):
        return x.clone()

@pytest.fixture
def cf_method():
    return Unchanged()
"""

# An SCM generator that knows the answer: it finds each input in the test split and re-renders
# it with the domain's renderer (a path independent of the engine's own true counterfactual).
SCM_TRUTH = """
import pytest, torch
from cfcheck.domains.morpho import load_split, true_counterfactual

class Truth:
    def __init__(self):
        test = load_split("test")
        self.images, self.factors = test.images.flatten(1), test.factors

    def counterfactual(self, x, parents, intervention):
        index = torch.cdist(x.flatten(1), self.images).argmin(1)
        values = {k: v.cpu() for k, v in intervention.items()}
        return true_counterfactual(self.factors[index], **values).to(x.device)

@pytest.fixture
def cf_method():
    return Truth()
"""

GRADIENT = """
import pytest, torch

class Gradient:
    def attribute(self, x, model, target):
        x = x.clone().requires_grad_(True)
        model(x).gather(1, target[:, None]).sum().backward()
        return x.grad.detach()

@pytest.fixture
def cf_method():
    return Gradient()
"""


def _records(scorecard):
    return {(r["kind"], r["domain"], r["suite"], r["metric"], r["task"]): r for r in scorecard["scores"]}


def test_an_scm_adapter_gets_its_contract_and_ground_truth_scored(tiny, scorecard_of):
    tiny.makepyfile(scm_identity=SCM_IDENTITY)
    result = tiny.runpytest("--method=scm_identity", "-rs")
    outcomes = result.parseoutcomes()
    output = result.stdout.str()
    assert "not built yet" not in output  # every SCM suite is built
    assert "tests of the attribution, latent, vce suites deselected: the method implements scm" not in output
    records = _records(scorecard_of("scm_identity"))
    errors = {
        task: r["value"] for (kind, domain, suite, metric, task), r in records.items() if metric == "ground_truth_error"
    }
    assert set(errors) == {"do_thickness/seed0", "do_intensity/seed0", "do_digit/seed0"}
    assert all(value > 0.01 for value in errors.values())  # leaving the input unchanged is not the answer
    for (kind, domain, suite, metric, _task), record in records.items():
        assert (kind, domain) == ("scm", "morpho")
        # realism leaves out the digits with fewer than two counterfactuals (extra.classes_skipped)
        assert record["n"] == 20 if suite != "realism" else 2 <= record["n"] <= 20
        if suite == "ground_truth":  # the distances are reported; the relative error is judged, and
            # identity, the input itself, sits at exactly 1, far above the bar
            expected = ("fail", 1.0) if metric == "ground_truth_relative_error" else (None, record["value"])
            assert (record["verdict"], record["value"]) == pytest.approx(expected), (metric, record)
    # contract 2; per do(): coverage and three ground-truth scores, 6 composition scores (identity
    # composes perfectly), 2 effectiveness (image and predictors: it fails, nothing changes), 4
    # causal-graph scores (2 other parents, image and predictors), 3 minimality scores (CLD, its
    # parts), 2 realism scores (its images show the observed digits: wrong under do(digit))
    failed = {
        (suite, metric, task)
        for (_, _, suite, metric, task), r in records.items()
        if r["verdict"] in ("fail", "inconclusive")
    }  # n = 20: some intervals straddle the bar
    assert (
        {"effectiveness", "causal_graph", "ground_truth"}
        <= {suite for suite, _, _ in failed}
        <= {"effectiveness", "causal_graph", "realism", "ground_truth"}
    )
    assert ("causal_graph", "preservation_error:intensity", "do_thickness/seed0") in failed
    # the contract, 3 interventions × the suites' tests, and test_domain_loads of the 3 registered domains
    assert (outcomes.get("passed"), outcomes.get("failed"), outcomes.get("error")) == (
        2 + 3 * (4 + 6 + 2 + 4 + 3 + 2) + 3 - len(failed),
        len(failed),
        None,
    )
    from cfcheck.reporting.examples import load_example_grids

    grids = load_example_grids(tiny.path / "reports" / "scm_identity-standard")
    assert [g.task for g in grids] == ["do_digit/seed0", "do_intensity/seed0", "do_thickness/seed0"]
    # composition's cycles join each grid (identity: every cycle returns the input)
    assert (
        grids[0].columns
        == (
            "input",
            "counterfactual",
            "difference",
            "true counterfactual",
            "after 1 null cycle",
            "after 10 null cycles",
        )
        and len(grids[0].rows) == 4
    )
    folder = tiny.path / "reports" / "scm_identity-standard"
    for row in grids[0].rows:
        assert (folder / row["after 10 null cycles"]).read_bytes() == (folder / row["input"]).read_bytes()


def test_the_true_scm_counterfactual_scores_zero_error(tiny, scorecard_of):
    tiny.makepyfile(scm_truth=SCM_TRUTH)
    result = tiny.runpytest("--method=scm_truth", "-k", "scm and ground_truth_error")
    result.assert_outcomes(passed=3)
    values = [r["value"] for r in scorecard_of("scm_truth")["scores"]]
    assert values == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)


def test_an_attribution_adapter_gets_its_contract_randomisation_and_removal_scored(tiny, scorecard_of):
    tiny.makepyfile(gradient=GRADIENT)
    result = tiny.runpytest("--method=gradient", "-rs")
    # contract, randomisation (morpho: random_net and the cnn's 5 cascade stages), ROAR/ROAD/GOAR on
    # morpho and gmm, test_domain_loads of 3 domains
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed"), outcomes.get("error")) == (25, None, None)
    scores = scorecard_of("gradient")["scores"]
    randomisation = {(r["metric"], r["task"]): r for r in scores if "randomisation" in r["metric"]}
    record = randomisation["attribution_randomisation_similarity", "random_net/seed0"]
    assert (record["kind"], record["domain"]) == ("attribution", "morpho")
    assert -1 <= record["value"] < 0.9 and record["n"] == 8  # a gradient depends on the weights
    assert len(record.get("samples", [])) == 0  # per-sample values live in the CSV
    # the standard profile's 5 random draws: the domain's random classifier, 4 re-initialised cnns
    draws = record["extra"]["draws"]
    assert draws["models"] == ["random_net", "cnn~reinit1", "cnn~reinit2", "cnn~reinit3", "cnn~reinit4"]
    assert sum(draws["means"]) / 5 == pytest.approx(record["value"]) and len(set(draws["means"])) == 5
    assert record["ci_low"] < record["value"] < record["ci_high"]
    # a gradient has no exact zeros: on its non-zero support it scores as on every pixel
    support = randomisation["attribution_randomisation_similarity_support", "random_net/seed0"]
    assert support["value"] == pytest.approx(record["value"]) and support["verdict"] is None
    layers = ("classifier.3", "classifier.1", "features.6", "features.3", "features.0")
    cascade = {
        (f"attribution_cascading_randomisation_similarity{variant}:{layer}", f"cnn~{layer}/seed0")
        for layer in layers
        for variant in ("", "_support")
    }
    assert set(randomisation) == cascade | {
        ("attribution_randomisation_similarity", "random_net/seed0"),
        ("attribution_randomisation_similarity_support", "random_net/seed0"),
    }
    assert all(r["n"] == 8 and r["verdict"] is None and -1 <= r["value"] < 0.9 for r in randomisation.values())
    removal = {(r["domain"], r["task"], r["metric"]) for r in scores if "randomisation" not in r["metric"]}
    metrics = {f"{s}_{m}:{o}" for s in ("roar", "road") for m in ("area", "gap") for o in ("morf", "lerf")}
    metrics |= {"goar_area", "goar_gap", "roar_leakage", "goar_leakage"}
    assert removal == {
        (d, f"{model}/seed0/removal", m) for d, model in (("morpho", "cnn"), ("gmm", "mlp")) for m in metrics
    }
    curves = [r["extra"]["curve"] for r in scores if r["metric"] == "goar_area"]
    assert all(c["levels"] == [0.0, 1.0] and len(c["method"]) == len(c["random"]) == 2 for c in curves)
    assert all(r["n"] == 24 for r in scores if "randomisation" not in r["metric"])  # removal_test of the tiny settings
    # ROAR and GOAR retrain 3 times per level (the section's default retraining_draws); ROAD retrains nothing
    for r in scores:
        if r["metric"].startswith(("roar_gap", "goar_gap")):
            assert len(r["extra"]["draws"]) == 3, r["metric"]
            assert r["value"] == pytest.approx(sum(r["extra"]["draws"]) / 3)
        elif r["metric"].startswith(("roar_area", "goar_area")):
            assert len(r["extra"]["draws"]["method"]) == len(r["extra"]["draws"]["random"]) == 3
        elif r["metric"].startswith("road"):
            assert "draws" not in r.get("extra", {}), r["metric"]
    csv_header = (tiny.path / "reports" / "gradient-standard" / "samples.csv").read_text().splitlines()[0]
    assert csv_header == "kind,domain,suite,metric,task,sample,value,input,label,target"
    # every task drew its examples, gmm's 64-d points as heat strips; the page says what they show
    card = scorecard_of("gradient")
    assert card["provenance"]["generation"].get("example_grids_failed", 0) == 0
    strips = list((tiny.path / "reports" / "gradient-standard" / "examples").glob("attribution-gmm-*/0_input.png"))
    assert strips
    html = (tiny.path / "reports" / "gradient-standard" / "scorecard.html").read_text()
    assert "<h2>Example saliency maps</h2>" in html and "Example counterfactuals" not in html


def test_a_wrongly_shaped_saliency_fails_the_contract_with_the_expected_shape(tiny):
    tiny.makepyfile(
        flat="""
import pytest, torch

class Flat:
    def attribute(self, x, model, target):
        return torch.zeros(len(x), 1024)

@pytest.fixture
def cf_method():
    return Flat()
"""
    )
    result = tiny.runpytest("--method=flat", "-k", "test_output_contract", "--cfcheck-domain=morpho")
    result.assert_outcomes(failed=1, skipped=3)  # the VCE, SCM and latent contracts skip
    result.stdout.fnmatch_lines(["*attribute returned shape (*, 1024); expected (*, 1, 32, 32) (one per input)*"])


def test_a_vce_with_a_counterfactual_helper_is_not_sent_through_the_scm_suites(tiny):
    tiny.makepyfile(
        helper="""
import pytest

class Identity:
    def explain(self, x, target, classifier, *, generator=None):
        return self.counterfactual(x, target)

    def counterfactual(self, x, target):  # a helper, not the SCM call
        return x.clone()

@pytest.fixture
def cf_method():
    return Identity()
"""
    )
    result = tiny.runpytest(
        "--method=helper", "-k", "test_output_contract", "--cfcheck-domain=morpho", "-rs", "-p", "no:xdist"
    )
    result.assert_outcomes(passed=1, skipped=3)  # the VCE contract runs; SCM, latent and attribution skip
    result.stdout.fnmatch_lines(
        [  # the cfcheck summary, then pytest's skip reasons
            "*method kind vce: explain(x, target, classifier, *, generator=None) takes the vce call*",
            "*method kind not taken: counterfactual(x, target)*",
            "*suite for scm methods; Identity implements vce; counterfactual(x, target) is not the scm call*",
        ]
    )


def test_a_declared_kind_deselects_the_other_kinds_suites(tiny):
    tiny.makepyfile(declared=SCM_IDENTITY + '\ncfcheck_kind = "scm"\n')
    result = tiny.runpytest("--method=declared", "-k", "contract")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*tests of the attribution, latent, vce suites deselected: the method implements scm*"]
    )


def test_a_return_annotation_also_declares_the_kind(tiny):
    tiny.makepyfile(annotated=GRADIENT.replace("def cf_method():", "def cf_method() -> Gradient:"))
    result = tiny.runpytest("--method=annotated", "-k", "contract")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*deselected: the method implements attribution*"])


def test_an_unknown_domain_is_a_usage_error(tiny):
    tiny.makepyfile(scm_identity=SCM_IDENTITY)
    result = tiny.runpytest("--method=scm_identity", "--cfcheck-domain=glyphz")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*no domain could be loaded: unknown domain 'glyphz'; registered domains: glyphs, gmm, morpho*"]
    )


def test_a_profile_naming_a_missing_classifier_is_a_usage_error(tiny, tiny_settings):
    tiny.makepyprojecttoml(tiny_settings.replace('classifiers = ["cnn"]', 'classifiers = ["resnet152"]'))
    tiny.makepyfile(scm_identity=SCM_IDENTITY)
    result = tiny.runpytest("--method=scm_identity")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "classifiers has unknown entries ['resnet152']; morpho explains cnn, robust_cnn, mlp, noise_cnn"
        in result.stderr.str()
    )


def test_a_custom_suite_without_a_kind_is_told_to_declare_one(tiny):
    tiny.makepyfile(scm_identity=SCM_IDENTITY)
    tiny.makepyfile(test_mine="def test_mine(cfcheck_task):\n    pass\n")
    result = tiny.runpytest("--method=scm_identity", "test_mine.py")
    result.stdout.fnmatch_lines(
        ["*uses cfcheck_task but has no kind: mark it*cfcheck_kind(kind), kind one of 'vce', 'scm'*"]
    )


def test_predictor_effectiveness_passes_the_truth_and_fails_identity(tiny, scorecard_of, tiny_settings):
    """Effectiveness read by the anti-causal predictors: the true counterfactual passes every
    intervention, the input left unchanged fails every one (24 inputs: with 8 some intervals straddle)."""
    tiny.makepyprojecttoml(
        tiny_settings.replace("[tool.cfcheck.scm]\nn_inputs = 8", "[tool.cfcheck.scm]\nn_inputs = 24")
    )
    found = {}
    for name, source in (("scm_truth", SCM_TRUTH), ("scm_identity", SCM_IDENTITY)):
        tiny.makepyfile(**{name: source})
        tiny.runpytest(f"--method={name}", "-k", "scm and effectiveness_predictors")
        found[name] = {f"{s['metric']}@{s['task']}": s["verdict"] for s in scorecard_of(name)["scores"]}
    assert (
        set(found["scm_truth"])
        == set(found["scm_identity"])
        == {
            "effectiveness_predictor_error:thickness@do_thickness/seed0",
            "effectiveness_predictor_error:intensity@do_intensity/seed0",
            "effectiveness_predictor_accuracy:digit@do_digit/seed0",
        }
    )
    assert set(found["scm_truth"].values()) == {"pass"}, found["scm_truth"]
    assert set(found["scm_identity"].values()) == {"fail"}, found["scm_identity"]
