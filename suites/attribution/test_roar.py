"""ROAR (Hooker et al. 2019): remove the pixels an attribution ranks first (MoRF) or last (LeRF),
set them to the training mean, retrain, and read the accuracy curve. See ``cfcheck cards roar_area``."""

from __future__ import annotations

import pytest

from cfcheck.kinds.attribution.removal import STRATEGIES
from cfcheck.kinds.attribution.removal_scoring import score_leakage, score_removal

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("removal")
@pytest.mark.parametrize("order", STRATEGIES["roar"])
def test_roar(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, order):
    score_removal(cfcheck_session, cfcheck_result, cfcheck_method, cfcheck_score, "roar", order)


@pytest.mark.cfcheck_tasks("removal")
def test_roar_leakage(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method):
    score_leakage(cfcheck_session, cfcheck_result, cfcheck_method, cfcheck_score, "roar")
