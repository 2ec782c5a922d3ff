"""--cfcheck-view: a visual counterfactual explainer scored by the removal suites through its
counterfactual direction v = x − c."""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds import MethodKind, view_as, view_source
from cfcheck.kinds.attribution.methods.saliency import CounterfactualDirection

DARKENING_EXPLAINER = """
import pytest

class Darken:
    def explain(self, x, target, classifier):
        return x * 0.5

@pytest.fixture
def cf_method():
    return Darken()
"""


class _Darken:
    def explain(self, x, target, classifier):
        return x * 0.5


def test_a_visual_explainer_is_viewed_as_its_counterfactual_direction():
    view = view_as(_Darken(), MethodKind.ATTRIBUTION)
    assert isinstance(view, CounterfactualDirection)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
    x = torch.rand(2, 1, 2, 2)
    direction = view.attribute(x, model, torch.tensor([0, 1]))
    torch.testing.assert_close(direction, x - x * 0.5)
    assert view_source(frozenset({MethodKind.SCM}), MethodKind.ATTRIBUTION) is None
    with pytest.raises(ValueError, match="no kind with a view as attribution"):
        view_as(object(), MethodKind.ATTRIBUTION)


def test_without_the_option_a_visual_explainer_gets_no_removal_scores(tiny):
    tiny.makepyfile(darken=DARKENING_EXPLAINER)
    result = tiny.runpytest("--method=darken", "-k", "goar", "-rs")
    result.assert_outcomes(skipped=4)  # GOAR and its leakage check on morpho and gmm
    result.stdout.fnmatch_lines(["*suite for attribution methods; Darken implements vce (--cfcheck-view attribution*"])


def test_the_attribution_view_scores_goar_on_image_domains_only(tiny, scorecard_of):
    tiny.makepyfile(darken=DARKENING_EXPLAINER)
    result = tiny.runpytest("--method=darken", "--cfcheck-view=attribution", "-k", "goar")
    result.assert_outcomes(passed=2)  # morpho's cnn; gmm is no image domain, which the explainer needs
    result.stdout.fnmatch_lines(["*views attribution*"])
    card = scorecard_of("darken")
    assert {(r["kind"], r["domain"], r["metric"]) for r in card["scores"]} == {
        ("attribution", "morpho", m) for m in ("goar_area", "goar_gap", "goar_leakage")
    }
    assert "x − c" in card["profile"]["views"]["attribution"]


def test_an_unknown_view_is_a_usage_error_naming_the_available_ones(tiny):
    tiny.makepyfile(darken=DARKENING_EXPLAINER)
    result = tiny.runpytest("--method=darken", "--cfcheck-view=scm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--cfcheck-view: no view as 'scm'; available: attribution (for vce methods*"])
