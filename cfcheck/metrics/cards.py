"""The registry of metric cards: :data:`CARDS` (key → card), :func:`get_card` and :func:`card_of`.

The card type and its plain-text rendering are in :mod:`cfcheck.metrics.card`; the cards themselves
in :mod:`cfcheck.metrics.definitions`, one module per property family. Importing this module
collects them and refuses a key defined twice.
"""

from __future__ import annotations

import difflib

from cfcheck.metrics.card import PROPORTION_UNITS, Bar, MetricCard, format_card  # noqa: F401  (re-exported)
from cfcheck.metrics.key import MetricKey

__all__ = [
    "CARDS",
    "Bar",
    "MetricCard",
    "MetricKey",
    "PROPORTION_UNITS",
    "UnknownMetricKey",
    "card_of",
    "format_card",
    "get_card",
]


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


class UnknownMetricKey(KeyError):
    """A score named a card the registry does not hold."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def card_of(metric: str | MetricKey) -> MetricCard:
    """The card of a score's key (``key`` or ``key:variant``, or a :class:`MetricKey`).

    Raises:
        UnknownMetricKey: ``unknown metric key 'x:y': no card 'x'; did you mean 'z'?``, with the
            closest card keys (or, without a close one, where to find them all).
    """
    key = MetricKey.parse(metric)
    card = CARDS.get(key.card)
    if card is not None:
        return card
    close = _suggestions(key)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else "`cfcheck cards` lists the known cards"
    raise UnknownMetricKey(f"unknown metric key {str(key)!r}: no card {key.card!r}; {hint}")


def _suggestions(key: MetricKey) -> list[str]:
    """Up to three keys ``key`` may have meant: its older spelling read (``road_gap_morf`` →
    ``road_gap:morf``), cards it begins (``fid`` → ``fid_target``) and cards spelt alike."""
    read = MetricKey.read(key.card, CARDS) if key.variant is None else key
    spelt = [str(read)] if read.card in CARDS else []
    begun = [card for card in CARDS if card.startswith(key.card + "_")]
    alike = difflib.get_close_matches(key.card, list(CARDS), n=3, cutoff=0.7)
    return list(dict.fromkeys([*spelt, *begun, *alike]))[:3]
