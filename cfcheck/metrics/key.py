"""A metric's identity, :class:`MetricKey` (a card key and an optional variant, ``card:variant``).

It is defined beside the score identity it is part of (:mod:`cfcheck.core.keys`, where the one spelling
and the reader of the old one live) and named here for the metrics' side, so ``cfcheck.metrics.key`` and
``cfcheck.metrics.MetricKey`` keep naming it.
"""

from __future__ import annotations

from cfcheck.core.keys import MetricKey

__all__ = ["MetricKey"]
