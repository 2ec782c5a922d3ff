"""The registry of metric cards: :data:`CARDS` (key → card), :func:`get_card` and :func:`card_of`.

The card type and its plain-text rendering are in :mod:`cfcheck.metrics.card`; the cards several
kinds share in :mod:`cfcheck.metrics.definitions`. Importing this module collects those and refuses
a key defined twice.

Every kind's own cards (its declaration's ``own_cards``: a bundled kind's in its folder,
``kinds/<kind>/cards``, another package's wherever it keeps them) are added here with
:func:`register_cards` when the kinds load (:func:`cfcheck.kinds.registry.declarations`), the higher
floor registering into this lower one; nothing here imports a kind. A key another owner already
defines is refused, naming both (:func:`card_owner`). Until the kinds are loaded in a process, the
registry holds the shared cards only, and :func:`get_card` and :func:`card_of` say so for a key they
do not find. A reader below the kinds takes the cards from its caller instead of reading
:data:`CARDS` (:func:`cfcheck.calibration.bars.read_bars_file`, for one).
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
    "is_bundled",
    "kinds_loaded",
    "note_kinds_loaded",
    "register_cards",
]

#: the owner of the cards cfcheck's kinds share (:func:`card_owner`)
BUNDLED_OWNER = "cfcheck (cfcheck.metrics.definitions)"
#: how a process that has not loaded the kinds gets their cards (said where a key is not found)
LOAD_THE_KINDS = (
    "the method kinds, whose own cards come with them, are not loaded in this process: "
    "call cfcheck.kinds.registry.declarations() first"
)


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
#: the keys of the cards cfcheck bundles: the shared ones, and those its own kinds register
_BUNDLED: set[str] = set(CARDS)
_LOADED: list[bool] = [False]  # whether the kinds' registry has registered the kinds' cards


def note_kinds_loaded() -> None:
    """Record that the kinds' own cards are registered (called by :mod:`cfcheck.kinds.registry`)."""
    _LOADED[0] = True


def kinds_loaded() -> bool:
    """Whether the kinds' own cards are registered in this process (:func:`note_kinds_loaded`)."""
    return _LOADED[0]


def is_bundled(key: str) -> bool:
    """Whether cfcheck itself defines the card ``key`` (a shared card or a bundled kind's own), so a
    scorecard need not carry its definition."""
    return key in _BUNDLED and key in CARDS


def card_owner(key: str) -> str | None:
    """Who defines the card ``key`` (None: no card has it)."""
    return _OWNERS.get(key) if key in CARDS else None


def register_cards(cards: Iterable[MetricCard], owner: str, *, bundled: bool = False) -> tuple[str, ...]:
    """Add cards defined outside :mod:`cfcheck.metrics.definitions` (a kind's own) to :data:`CARDS`.

    Registering again what ``owner`` registered before replaces its cards (a reloaded kind); nothing is
    added when any card is refused.

    Args:
        cards: the cards.
        owner: who defines them, for messages (``"kind 'toy'"``).
        bundled: whether cfcheck itself ships them (a bundled kind's own cards: :func:`is_bundled`).

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
        (_BUNDLED.add if bundled else _BUNDLED.discard)(card.key)
    return tuple(keys)


def get_card(key: str) -> MetricCard:
    """The card for ``key``; a KeyError lists the known keys."""
    try:
        return CARDS[key]
    except KeyError:
        loaded = "" if kinds_loaded() else f"; {LOAD_THE_KINDS}"
        raise KeyError(f"no metric card {key!r}; known cards: {', '.join(sorted(CARDS))}{loaded}") from None


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
    loaded = "" if kinds_loaded() else f"; {LOAD_THE_KINDS}"
    raise UnknownMetricKey(f"unknown metric key {str(key)!r}: no card {key.card!r}; {close_cards_hint(key)}{loaded}")


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
