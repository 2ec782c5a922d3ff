"""cfcheck: a pytest conformance suite for counterfactual methods."""

from cfcheck.core.aliases import install_aliases

__version__ = "0.1.0"

#: old module name -> its module now (both relative to ``cfcheck``): they still import, as the
#: very modules they moved to
MOVED = {
    "calibration.run": "calibrate.run",
    "calibration.domain_run": "calibrate.domain_run",
    "calibration.evidence": "reporting.evidence",
}
install_aliases(__name__, MOVED)
