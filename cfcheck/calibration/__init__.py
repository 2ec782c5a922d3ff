"""Calibration's files and how they are read: the library that the session, the kinds and the
reporting share; it names no kind.

- :mod:`.bars`: the bars per (metric, domain) (``bars-<profile>.json``);
- :mod:`.store`: the controls' values per score (``calibration-<profile>.json``);
- :mod:`.runs`: one conformance run of a control, its scorecard kept per seed.

Running the controls is ``cfcheck calibrate`` (:mod:`cfcheck.calibrate`, above the kinds); what
the controls measured, per metric card, is :mod:`cfcheck.reporting.evidence`. The modules'
earlier names (:data:`MOVED`: ``cfcheck.calibration.run``, ``.domain_run``, ``.evidence``) still
import, as the very modules they moved to.
"""

from cfcheck.core.aliases import install_aliases

#: old module name -> its module now (both relative to ``cfcheck``); an old name is imported
#: through this package, so its table is installed here
MOVED = {
    "calibration.run": "calibrate.run",
    "calibration.domain_run": "calibrate.domain_run",
    "calibration.evidence": "reporting.evidence",
}
install_aliases("cfcheck", MOVED)
