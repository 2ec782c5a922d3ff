"""A metric card of no bundled kind, for tests of how cards are registered, embedded and rendered."""

from __future__ import annotations

from typing import Any

from cfcheck.metrics.card import MetricCard


def toy_card(key: str = "toy_rate", **changed: Any) -> MetricCard:
    """A proportion card "Toy rate" (higher is better, in [0, 1]) under ``key``, with ``changed`` fields."""
    fields: dict[str, Any] = dict(
        key=key,
        name="Toy rate",
        formula="the share of inputs rated",
        direction="higher",
        range=(0.0, 1.0),
        units="fraction of inputs",
        normalisation="none",
        abstentions="an abstention counts as not rated",
        citation="a test",
        per_sample=True,
    )
    return MetricCard(**{**fields, **changed})
