"""Gating against a baseline: a ratchet that fails only what got worse.

A baseline is the scorecard of a complete earlier run, failures included
(``pytest --method=... --cfcheck-save-baseline base.json``). With ``--cfcheck-baseline base.json`` each
score is compared with its stored self (:mod:`cfcheck.baseline.store`), a score that missed its bar
there and misses it now without getting worse is a known failure (pytest's xfail), and
``changes.md`` beside the scorecard says what changed (:mod:`cfcheck.baseline.compare`,
:mod:`cfcheck.baseline.run`, rendered by :mod:`cfcheck.reporting.changes`).
"""

from cfcheck.baseline.store import Baseline, BaselineError, Judgement, Regression, StoredScore, classify

__all__ = ["Baseline", "BaselineError", "Judgement", "Regression", "StoredScore", "classify"]
