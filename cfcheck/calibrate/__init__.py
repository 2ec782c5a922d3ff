"""``cfcheck calibrate``: run the controls through the suites and keep what they reached.

- :mod:`.run`: over the bundled domains, every kind's bundled controls (the verdict matrix and
  the calibration table, the controls' values per score);
- :mod:`.domain_run`: ``cfcheck calibrate --domain SPEC [--kind KIND]``, a domain's bars, earned
  by the calibration the kind declares in its folder.

It stands above the kinds (whose controls it runs) and the reporting (whose views it redraws);
what it writes and what reads it back is :mod:`cfcheck.calibration`'s.
"""
