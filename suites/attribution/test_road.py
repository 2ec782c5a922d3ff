"""ROAD (Rong et al. 2022): remove the ranked pixels by noisy linear imputation and read the
explained model's accuracy curve, without retraining. See ``cfcheck cards road_area``."""

from __future__ import annotations

import pytest

from cfcheck.kinds.attribution.removal import STRATEGIES
from cfcheck.kinds.attribution.removal_scoring import score_removal

pytestmark = pytest.mark.cfcheck_kind("attribution")


@pytest.mark.cfcheck_tasks("removal")
@pytest.mark.parametrize("order", STRATEGIES["road"])
def test_road(cfcheck_result, cfcheck_score, cfcheck_session, cfcheck_method, order):
    score_removal(cfcheck_session, cfcheck_result, cfcheck_method, cfcheck_score, "road", order)
