"""Calibration: running the controls, keeping what they reached, and the bars earned from it.

- :mod:`.run`: ``cfcheck calibrate`` over the bundled domains (the verdict matrix and the
  calibration table);
- :mod:`.domain_run`: ``cfcheck calibrate --domain SPEC``, a user domain's bars;
- :mod:`.store`: the controls' values per score (``calibration-<profile>.json``);
- :mod:`.bars`: the bars per (metric, domain) (``bars-<profile>.json``);
- :mod:`.evidence`: what the controls measured, per metric card.
"""

from cfcheck.calibration.run import (
    CONTROLS,
    KIND_CONTROLS,
    REFERENCE_METHODS,
    SCM_CONTROLS,
    calibrated_kinds,
    main,
    seed_folder,
    suite_summary,
)

__all__ = [
    "CONTROLS",
    "KIND_CONTROLS",
    "REFERENCE_METHODS",
    "SCM_CONTROLS",
    "calibrated_kinds",
    "main",
    "seed_folder",
    "suite_summary",
]
