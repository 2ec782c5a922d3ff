"""The SCM kind's controls table (``cfcheck calibrate --methods scm_truth scm_identity scm_resample
scm_noise``): the suites each control is expected to pass or fail."""

from __future__ import annotations

from cfcheck.kinds.declaration import Control, Expectation

__all__ = ["CONTROLS", "CONTROL_SUITES"]

PASS, FAIL = Expectation.PASS, Expectation.FAIL

#: the suites the calibration tabulates for these controls
CONTROL_SUITES = ("composition", "effectiveness", "causal_graph", "realism")

CONTROLS: dict[str, Control] = {
    "scm_truth": Control.expecting(
        composition=PASS, effectiveness=PASS, causal_graph=PASS, realism=PASS, ground_truth=PASS
    ),
    "scm_identity": Control.expecting(
        composition=PASS, effectiveness=FAIL, causal_graph=FAIL, realism=FAIL, ground_truth=FAIL
    ),
    "scm_resample": Control.expecting(
        composition=FAIL, effectiveness=PASS, causal_graph=PASS, realism=PASS, ground_truth=FAIL
    ),
    "scm_noise": Control.expecting(
        composition=FAIL, effectiveness=FAIL, causal_graph=FAIL, realism=FAIL, ground_truth=FAIL
    ),
}
