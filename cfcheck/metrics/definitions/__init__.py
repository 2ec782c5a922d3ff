"""The metric cards shared by several kinds, and what every card module uses.

:data:`ALL_CARDS` holds the cards no one kind owns (coverage, the ground-truth errors); a bundled
kind's own cards live in its folder (``kinds/<kind>/cards``) and reach the registry
(:data:`cfcheck.metrics.cards.CARDS`) when the kinds load, as another package's kind's do.

Every bar's rationale names the controls it sits between and why. What the controls reached on a
bundled domain is not quoted there: ``cfcheck calibrate`` writes it to the domain's calibration
file and :mod:`cfcheck.reporting.evidence` shows it beside the card. Numbers from other
measurements (floors, baselines, other scripts) name the command that measured them.

Where a card's number differs from the one a paper's own code computes, the difference is defined
in :mod:`cfcheck.metrics.definitions.paper_code` (card key → differences) and attached by
:func:`with_own_paper_differences`, here and in each kind's cards module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from cfcheck.metrics.card import MetricCard, PaperDifference
from cfcheck.metrics.definitions.closeness import GROUND_TRUTH_CARDS
from cfcheck.metrics.definitions.paper_code import PAPER_DIFFERENCES
from cfcheck.metrics.definitions.validity import VALIDITY_CARDS


def with_paper_differences(
    cards: tuple[MetricCard, ...], differences: Mapping[str, tuple[PaperDifference, ...]]
) -> tuple[MetricCard, ...]:
    """``cards`` with each one's differences from the papers' code appended.

    Args:
        cards: the metric cards.
        differences: card key → its differences (:data:`~cfcheck.metrics.definitions.paper_code.PAPER_DIFFERENCES`).

    Returns:
        The cards in the same order, those named in ``differences`` replaced by a copy that carries them.

    Raises:
        KeyError: a key of ``differences`` names no card.
    """
    unknown = sorted(set(differences) - {card.key for card in cards})
    if unknown:
        raise KeyError(f"differences from the papers' code name no card: {', '.join(unknown)}")
    return tuple(
        dataclasses.replace(card, differences=card.differences + differences[card.key])
        if card.key in differences
        else card
        for card in cards
    )


def with_own_paper_differences(cards: tuple[MetricCard, ...]) -> tuple[MetricCard, ...]:
    """``cards`` with the differences from the papers' code that
    :data:`~cfcheck.metrics.definitions.paper_code.PAPER_DIFFERENCES` defines for them appended.

    Args:
        cards: the metric cards (cfcheck's shared ones, or one kind's own).

    Returns:
        The cards in the same order, each named in ``PAPER_DIFFERENCES`` replaced by a copy that carries
        its differences.
    """
    keys = {card.key for card in cards}
    return with_paper_differences(cards, {key: found for key, found in PAPER_DIFFERENCES.items() if key in keys})


ALL_CARDS = with_own_paper_differences((*VALIDITY_CARDS, *GROUND_TRUTH_CARDS))

__all__ = ["ALL_CARDS", "with_own_paper_differences", "with_paper_differences"]
