"""A captum attribution becomes a cfcheck method in one line and gets removal scores and curves.

captum is an optional extra: CI installs it (``.ci/run``); elsewhere the test skips with the
install command."""

from __future__ import annotations

import pytest

# imported here, before pytester snapshots sys.modules: captum pulls in torch modules that register
# native operators, and a second import after the in-process run's cleanup would register them twice
pytest.importorskip("captum.attr", reason="captum is an optional extra: pip install 'cfcheck[captum]'")

CAPTUM_IG = """
import pytest
from captum.attr import IntegratedGradients
from cfcheck.kinds.attribution.methods.captum_adapter import captum_method

@pytest.fixture
def cf_method():
    return captum_method(IntegratedGradients, n_steps=8)
"""


def test_a_captum_one_liner_gets_goar_scores_and_curves(tiny, scorecard_of):
    tiny.makepyfile(captum_ig=CAPTUM_IG)
    result = tiny.runpytest("--method=captum_ig", "-k", "goar")
    result.assert_outcomes(passed=4)  # GOAR and its leakage check on morpho's cnn and gmm's mlp
    scores = {(r["domain"], r["metric"]): r for r in scorecard_of("captum_ig")["scores"]}
    assert set(scores) == {(d, m) for d in ("morpho", "gmm") for m in ("goar_area", "goar_gap", "goar_leakage")}
    for domain in ("morpho", "gmm"):
        area = scores[(domain, "goar_area")]
        curve = area["extra"]["curve"]
        assert curve["levels"] == [0.0, 1.0] and 0 <= area["value"] <= 1
        assert area["value"] == pytest.approx(sum(curve["method"]) / 2, abs=1e-9)  # trapezoid over two levels
    html = (tiny.path / "reports" / "captum_ig-standard" / "scorecard.html").read_text()
    assert html.count("<polyline") == 4  # method and random, per domain


def test_the_readme_snippet_deselects_the_other_kinds_suites(tiny, documented_snippets):
    """The documentation's captum adapter (docs/guides/attribution.md), verbatim: its return
    annotation tells cfcheck the kind before the fixture runs, so the VCE, SCM and latent suites are
    deselected, not printed as skipped."""
    tiny.makepyfile(my_captum=documented_snippets["my_captum"])
    result = tiny.runpytest("--method=my_captum", "-k", "test_output_contract", "--cfcheck-domain=morpho")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*tests of the latent, scm, vce suites deselected: the method implements attribution*"]
    )
