"""The registry of metric cards: :data:`CARDS` (key → card) and :func:`get_card`.

The card type and its plain-text rendering are in :mod:`cfcheck.metrics.card`; the cards themselves
in :mod:`cfcheck.metrics.definitions`, one module per property family. Importing this module
collects them and refuses a key defined twice.
"""

from __future__ import annotations

from cfcheck.metrics.card import PROPORTION_UNITS, Bar, MetricCard, format_card  # noqa: F401  (re-exported)

__all__ = ["CARDS", "Bar", "MetricCard", "PROPORTION_UNITS", "format_card", "get_card"]


def _collect() -> dict[str, MetricCard]:
    from cfcheck.metrics.definitions import ALL_CARDS

    cards: dict[str, MetricCard] = {}
    for card in ALL_CARDS:
        if card.key in cards:
            raise ValueError(f"metric card {card.key!r} is defined twice")
        cards[card.key] = card
    return cards


CARDS: dict[str, MetricCard] = _collect()


def get_card(key: str) -> MetricCard:
    """The card for ``key``; a KeyError lists the known keys."""
    try:
        return CARDS[key]
    except KeyError:
        raise KeyError(f"no metric card {key!r}; known cards: {', '.join(sorted(CARDS))}") from None
