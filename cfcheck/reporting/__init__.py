"""Rendering and combining scorecards: Markdown, HTML, badge, comparison of runs, merging shards.

The scorecard JSON (written by :mod:`.scorecard`) is the single source; every module
here reads it (and the run folder's ``samples.csv`` and ``examples/``) and writes views of it.
"""
