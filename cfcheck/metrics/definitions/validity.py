"""Coverage, the card every kind that lets a method abstain records, and :func:`proportion_card`,
the shape of every card that is a share of inputs (the kinds' validity cards use it too)."""

from __future__ import annotations

from typing import Any

from cfcheck.metrics.card import PROPORTION_UNITS, Direction, MetricCard
from cfcheck.metrics.definitions._common import (
    F_PRED,
    FAILURE0,
    VAETH_31,
)


def proportion_card(
    key: str,
    name: str,
    formula: str,
    direction: Direction,
    *,
    abstentions: str = FAILURE0,
    citation: str = VAETH_31,
    normalisation: str = F_PRED,
    **kwargs: Any,
) -> MetricCard:
    """A card whose number is a share of inputs: range [0, 1], per sample, in proportion units.

    Args:
        key: the card's key.
        name: its name.
        formula: its formula.
        direction: which way is better.
        abstentions: how an abstention counts (default: as a failure, 0).
        citation: where the metric comes from.
        normalisation: what the inputs are.
        **kwargs: the card's other fields (:class:`~cfcheck.metrics.card.MetricCard`).

    Returns:
        The card.
    """
    return MetricCard(
        key,
        name,
        formula,
        direction,
        (0.0, 1.0),
        PROPORTION_UNITS,
        normalisation,
        abstentions,
        citation,
        True,
        **kwargs,
    )


VALIDITY_CARDS = (
    proportion_card(
        "coverage",
        "Coverage",
        "coverage = 1/|X| Σ_x 1[method did not abstain on x]",
        "higher",
        abstentions="defines the metric",
        citation="cfcheck design (rejection step recommended by Väth et al. 2023, §5, Hypothesis 2)",
        normalisation="abstention mask returned by the method",
        notes="Read every 'excluded' metric together with its coverage.",
        bar=None,
        tolerance=0.05,
        rationale=(
            "No bar: of the bundled controls only truth_rejecting abstains at all, and on few inputs, so "
            "no negative control could calibrate one; a method that abstains a lot fails TA and OTA "
            "instead, which count abstentions as failures."
        ),
        failure_hint="the method abstained on most inputs",
    ),
)
