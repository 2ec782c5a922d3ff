"""The registry of metric cards: :data:`CARDS` (key → card), :func:`get_card` and :func:`card_of`.

The card type and its plain-text rendering are in :mod:`cfcheck.metrics.card`; cfcheck's own cards
in :mod:`cfcheck.metrics.definitions`, one module per property family. Importing this module
collects them and refuses a key defined twice.

A method kind of another package may define cards of its own (its declaration's ``own_cards``):
the kinds' registry adds them here with :func:`register_cards` when it loads the kinds
(:mod:`cfcheck.kinds.registry`), the higher floor registering into this lower one; nothing here
imports a kind. A key another owner already defines is refused, naming both (:func:`card_owner`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

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
    "card_owner",
    "close_cards_hint",
    "format_card",
    "get_card",
    "register_cards",
]

#: the owner of cfcheck's own cards (:func:`card_owner`)
BUNDLED_OWNER = "cfcheck (cfcheck.metrics.definitions)"


def _collect() -> dict[str, MetricCard]:
    from cfcheck.metrics.definitions import ALL_CARDS

    cards: dict[str, MetricCard] = {}
    for card in ALL_CARDS:
        if card.key in cards:
            raise ValueError(f"metric card {card.key!r} is defined twice")
        cards[card.key] = card
    return cards


CARDS: dict[str, MetricCard] = _collect()
#: card key → who defines it: :data:`BUNDLED_OWNER`, or the owner :func:`register_cards` was given
_OWNERS: dict[str, str] = dict.fromkeys(CARDS, BUNDLED_OWNER)


def card_owner(key: str) -> str | None:
    """Who defines the card ``key`` (None: no card has it)."""
    return _OWNERS.get(key) if key in CARDS else None


def register_cards(cards: Iterable[MetricCard], owner: str) -> tuple[str, ...]:
    """Add cards defined outside :mod:`cfcheck.metrics.definitions` (a kind's own) to :data:`CARDS`.

    Registering again what ``owner`` registered before replaces its cards (a reloaded kind); nothing is
    added when any card is refused.

    Args:
        cards: the cards.
        owner: who defines them, for messages (``"kind 'toy'"``).

    Returns:
        The keys registered, in order.

    Raises:
        TypeError: an entry is not a :class:`MetricCard`.
        ValueError: a key is given twice, or another owner already defines a card of that key
            (the message names both).
    """
    new = list(cards)
    wrong = [card for card in new if not isinstance(card, MetricCard)]
    if wrong:
        raise TypeError(f"{owner}'s metric cards must be MetricCard objects (cfcheck.metrics.card); got {wrong[0]!r}")
    keys = [card.key for card in new]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ValueError(f"{owner} defines the metric card {twice[0]!r} twice")
    for key in keys:
        other = card_owner(key)
        if other is not None and other != owner:
            raise ValueError(
                f"{owner}'s metric card {key!r} clashes with the card {key!r} that {other} defines; "
                "give the new card a key of its own"
            )
    for card in new:
        CARDS[card.key] = card
        _OWNERS[card.key] = owner
    return tuple(keys)


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
    raise UnknownMetricKey(f"unknown metric key {str(key)!r}: no card {key.card!r}; {close_cards_hint(key)}")


def close_cards_hint(metric: str | MetricKey) -> str:
    """``did you mean 'z'?`` with the closest card keys to ``metric``'s card, or, without a close one,
    where to find them all."""
    close = _suggestions(MetricKey.parse(metric))
    return f"did you mean {' or '.join(repr(c) for c in close)}?" if close else "`cfcheck cards` lists the known cards"


def _suggestions(key: MetricKey) -> list[str]:
    """Up to three keys ``key`` may have meant: its older spelling read (``road_gap_morf`` →
    ``road_gap:morf``), cards it begins (``fid`` → ``fid_target``) and cards spelt alike."""
    read = MetricKey.read(key.card, CARDS) if key.variant is None else key
    spelt = [str(read)] if read.card in CARDS else []
    begun = [card for card in CARDS if card.startswith(key.card + "_")]
    alike = difflib.get_close_matches(key.card, list(CARDS), n=3, cutoff=0.7)
    return list(dict.fromkeys([*spelt, *begun, *alike]))[:3]
