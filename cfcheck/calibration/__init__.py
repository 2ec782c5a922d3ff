"""Calibration's files and how they are read: the library that the session, the kinds and the
reporting share; it names no kind.

- :mod:`.bars`: the bars per (metric, domain) (``bars-<profile>.json``);
- :mod:`.store`: the controls' values per score (``calibration-<profile>.json``);
- :mod:`.runs`: one conformance run of a control, its scorecard kept per seed.

Running the controls is ``cfcheck calibrate`` (:mod:`cfcheck.cli.calibrate_run`,
:mod:`cfcheck.cli.calibrate_domain`, above the kinds and the reporting); what the controls
measured, per metric card, is :mod:`cfcheck.reporting.evidence`.
"""
