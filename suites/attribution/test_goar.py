"""GOAR (Park et al. 2023): move each input against its attribution, x − s·a/‖a‖, project it back
to the data manifold with the domain's diffusion model, retrain, and count the inputs misclassified
at any strength so far. See ``cfcheck cards goar_area``."""

from __future__ import annotations

import pytest

from cfcheck.kinds.attribution.removal import STRATEGIES
from cfcheck.kinds.attribution.removal_scoring import score_leakage, score_removal

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("removal")
@pytest.mark.parametrize("order", STRATEGIES["goar"])
def test_goar(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, order):
    score_removal(cfcheck_session, cfcheck_result, cfcheck_method, cfcheck_score, "goar", order)


@pytest.mark.cfcheck_tasks("removal")
def test_goar_leakage(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method):
    score_leakage(cfcheck_session, cfcheck_result, cfcheck_method, cfcheck_score, "goar")
