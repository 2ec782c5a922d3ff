"""Rendering and combining scorecards: the typed scorecard model, its report formats (Markdown, HTML,
badge and a plugin's), comparison of runs, merging shards.

The scorecard JSON (written by :mod:`.scorecard`) is the single source: :class:`.model.Scorecard` is
built once from it and every format (:mod:`.formats`, each an implementation of the hook
``pytest_cfcheck_scorecard``) reads that model and the run folder's example grids; no format looks a
domain up (what the pages show of the controls is the JSON's ``calibration`` section).
"""
