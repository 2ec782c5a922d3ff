"""A ten-line latent-explainer adapter gets an S# scorecard; the latent contract suite runs."""

from __future__ import annotations

import pytest

ADAPTER = """
import pytest
from cfcheck.kinds.latent.methods.latent_cf import LatentCF

class MyExplainer:
    def __init__(self):
        self.search = LatentCF(max_iterations=20)
    def explain(self, z, latent_classifier, generator, *, rng=None):
        return self.search.explain(z, latent_classifier, generator, rng=rng)

@pytest.fixture
def cf_method():
    return MyExplainer()
"""

SHAPELESS = """
import pytest

class OneCounterfactual:
    def explain(self, z, latent_classifier, generator):
        return z[:, None].clone()

@pytest.fixture
def cf_method():
    return OneCounterfactual()
"""


def test_a_ten_line_adapter_gets_an_s_sharp_scorecard(tiny, scorecard_of):
    assert len(ADAPTER.strip().splitlines()) <= 12
    tiny.makepyfile(my_explainer=ADAPTER)
    result = tiny.runpytest("--method=my_explainer", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()  # the other kinds' suites are skipped: the method is latent
    # coverage, 5 rates, S#, contract, test_domain_loads of the 3 registered domains: all pass but S#,
    # which may be inconclusive on 8 inputs
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1 + 5 + 1 + 2 + 3 and outcomes.get("failed", 0) <= 1
    scores = {r["metric"]: r for r in scorecard_of("my_explainer")["scores"]}
    assert scores["synbols_s_sharp"]["verdict"] in ("pass", "inconclusive")
    assert scores["synbols_s_sharp"]["threshold"] is not None  # judged against its bar
    assert outcomes.get("failed", 0) == (scores["synbols_s_sharp"]["verdict"] != "pass")
    expected = {"coverage", "synbols_s_sharp", *(f"synbols_{c}_rate" for c in ("ef", "ncf", "cf", "sce", "trivial"))}
    assert expected <= set(scores)
    s_sharp = scores["synbols_s_sharp"]
    assert s_sharp["n"] == 8 and s_sharp["domain"] == "glyphs"
    assert 0 <= s_sharp["value"] <= 10
    rates = {c: scores[f"synbols_{c}_rate"]["value"] for c in ("ef", "ncf", "cf", "sce", "trivial")}
    assert rates["sce"] == pytest.approx(rates["ncf"] + rates["cf"])  # disjoint by definition
    assert rates["ef"] == pytest.approx(rates["ncf"] + rates["trivial"])
    assert rates["ef"] > 0.5, "a gradient search on the latent classifier flips it"


def test_one_counterfactual_per_input_breaks_the_contract(tiny):
    tiny.makepyfile(one_cf=SHAPELESS)
    result = tiny.runpytest("--method=one_cf", "-k", "contract", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2 and "passed" not in outcomes
    result.stdout.fnmatch_lines(["*counterfactuals per input*K = 10*"])
