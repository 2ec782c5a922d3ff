"""The metric cards, one module per property family; :data:`ALL_CARDS` collects them.

Every bar's rationale names the controls it sits between and why. What the controls reached on a
bundled domain is not quoted there: ``cfcheck calibrate`` writes it to the domain's calibration
file and :mod:`cfcheck.reporting.evidence` shows it beside the card. Numbers from other
measurements (floors, baselines, other scripts) name the command that measured them.

Where a card's number differs from the one a paper's own code computes, the difference is defined
in :mod:`cfcheck.metrics.definitions.paper_code` (card key → differences) and attached here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from cfcheck.metrics.card import MetricCard, PaperDifference
from cfcheck.metrics.definitions.closeness import CLOSENESS_CARDS
from cfcheck.metrics.definitions.paper_code import PAPER_DIFFERENCES
from cfcheck.metrics.definitions.realism import REALISM_CARDS
from cfcheck.metrics.definitions.removal import REMOVAL_CARDS
from cfcheck.metrics.definitions.sanity import SANITY_CARDS
from cfcheck.metrics.definitions.scm import SCM_CARDS
from cfcheck.metrics.definitions.scm_models import SCM_MODEL_CARDS
from cfcheck.metrics.definitions.scm_realism import SCM_REALISM_CARDS
from cfcheck.metrics.definitions.synbols import SYNBOLS_CARDS
from cfcheck.metrics.definitions.validity import TRANSITION_CARDS, VALIDITY_CARDS


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


_CARDS = (
    *VALIDITY_CARDS,
    *TRANSITION_CARDS,
    *CLOSENESS_CARDS,
    *REALISM_CARDS,
    *SANITY_CARDS,
    *SCM_CARDS,
    *SCM_MODEL_CARDS,
    *SCM_REALISM_CARDS,
    *REMOVAL_CARDS,
    *SYNBOLS_CARDS,
)

ALL_CARDS = with_paper_differences(_CARDS, PAPER_DIFFERENCES)

__all__ = ["ALL_CARDS", "with_paper_differences"]
