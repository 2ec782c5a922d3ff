"""A metric card as JSON and back: how a scorecard carries the cards cfcheck does not bundle.

A kind of another package defines cards of its own (:func:`cfcheck.metrics.cards.register_cards`),
known only in a process that loaded that kind. A scorecard therefore carries those cards' definitions
(its ``cards`` section, :func:`unbundled_cards_json`), so that its pages render them where the kind is
not installed; cfcheck's own cards stay out (cfcheck ships them). :func:`card_to_json` and
:func:`card_from_json` convert every field of a :class:`~cfcheck.metrics.card.MetricCard`, so a card
read back is equal to the card written. An infinite end of a card's range is written as ``null``
(JSON has no infinity).

Example:
    >>> from cfcheck.metrics.cards import get_card
    >>> card = get_card("validity")
    >>> card_from_json(card_to_json(card)) == card
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from cfcheck.core.thresholds import Bar
from cfcheck.metrics.card import MetricCard, PaperCode, PaperDifference

__all__ = ["CardJsonError", "card_from_json", "card_to_json", "cards_from_json", "unbundled_cards_json"]

#: the text fields every card has, written as they are
_TEXT = ("key", "name", "formula", "direction", "units", "normalisation", "abstentions", "citation")
#: the text fields a card may leave empty
_OPTIONAL_TEXT = ("notes", "rationale", "failure_hint", "interval")


class CardJsonError(ValueError):
    """A card's JSON that is no card (the message names the card and what was expected)."""


def _bar_json(bar: Bar) -> dict[str, Any]:
    return {"bound": bar.bound, "kind": bar.kind, "relative": bar.relative}


def _bound_json(value: float) -> float | None:
    return None if math.isinf(value) else value


def card_to_json(card: MetricCard) -> dict[str, Any]:
    """Every field of ``card`` as JSON-ready data (:func:`card_from_json` reads it back).

    Args:
        card: the metric card.

    Returns:
        A dict of plain values: texts, numbers, lists and dicts.
    """
    data: dict[str, Any] = {name: getattr(card, name) for name in (*_TEXT, *_OPTIONAL_TEXT)}
    data.update(
        {
            "range": [_bound_json(card.range[0]), _bound_json(card.range[1])],
            "per_sample": card.per_sample,
            "bar": _bar_json(card.bar) if card.bar is not None else None,
            "profile_bars": {name: _bar_json(bar) for name, bar in card.profile_bars.items()},
            "tolerance": card.tolerance,
            "computed_by": list(card.computed_by),
            "differences": [
                {
                    "code": {
                        "paper": d.code.paper,
                        "repository": d.code.repository,
                        "commit": d.code.commit,
                        "unchecked": d.code.unchecked,
                    },
                    "where": d.where,
                    "difference": d.difference,
                    "conversion": d.conversion,
                    "bug": d.bug,
                }
                for d in card.differences
            ],
            "revision": card.revision,
        }
    )
    return data


def _bar(data: Any) -> Bar:
    if not isinstance(data, Mapping):
        raise TypeError(f"a bar is an object with 'bound', 'kind' and 'relative', got {data!r}")
    return Bar(float(data["bound"]), str(data["kind"]), data.get("relative", "absolute"))


def _range(data: Any) -> tuple[float, float]:
    if not isinstance(data, (list, tuple)) or len(data) != 2:
        raise TypeError(f"'range' is [low, high] (null: unbounded), got {data!r}")
    low, high = data
    return (-math.inf if low is None else float(low), math.inf if high is None else float(high))


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"'{name}' is a text, got {value!r}")
    return value


def _difference(data: Mapping[str, Any]) -> PaperDifference:
    code = data["code"]
    return PaperDifference(
        code=PaperCode(code["paper"], code["repository"], code.get("commit"), code.get("unchecked", "")),
        where=data["where"],
        difference=data["difference"],
        conversion=data.get("conversion", ""),
        bug=bool(data.get("bug", False)),
    )


def card_from_json(data: Any, key: str | None = None) -> MetricCard:
    """The card :func:`card_to_json` wrote.

    Args:
        data: the card's JSON.
        key: the key the card is filed under (a scorecard's ``cards`` section), checked against the
            card's own; None: not checked.

    Returns:
        The card, equal to the one written.

    Raises:
        CardJsonError: ``data`` is no card's JSON, or its key is not ``key`` (naming the card and what
            was expected).
    """
    where = f"metric card {key or (data.get('key') if isinstance(data, Mapping) else None)!r}"
    if not isinstance(data, Mapping):
        raise CardJsonError(f"{where}: expected an object of the card's fields, got {data!r}")
    try:
        texts: dict[str, Any] = {name: _text(data[name], name) for name in _TEXT}
        texts.update({name: _text(data.get(name, ""), name) for name in _OPTIONAL_TEXT})
        card = MetricCard(
            **texts,
            range=_range(data.get("range")),
            per_sample=bool(data["per_sample"]),
            bar=_bar(data["bar"]) if data.get("bar") is not None else None,
            profile_bars={str(name): _bar(bar) for name, bar in (data.get("profile_bars") or {}).items()},
            tolerance=float(data.get("tolerance", 0.0)),
            computed_by=tuple(data.get("computed_by") or ()),
            differences=tuple(_difference(d) for d in data.get("differences") or ()),
            revision=int(data.get("revision", 1)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        missing = f"the field {error}" if isinstance(error, KeyError) else str(error)
        raise CardJsonError(f"{where} cannot be read: {missing} (expected what card_to_json writes)") from None
    if key is not None and card.key != key:
        raise CardJsonError(f"{where}: the card filed under {key!r} has the key {card.key!r}")
    return card


def cards_from_json(section: Any) -> dict[str, MetricCard]:
    """A scorecard's ``cards`` section (key → the card's JSON) read back; None or absent: no cards.

    Raises:
        CardJsonError: the section is no object, or one of its cards cannot be read (naming it).
    """
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise CardJsonError(f"a scorecard's 'cards' section is an object (key → card), got {section!r}")
    return {str(key): card_from_json(data, str(key)) for key, data in section.items()}


def unbundled_cards_json(keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The JSON of each registered card among ``keys`` that cfcheck does not bundle (the own cards of a
    kind from another package, :func:`cfcheck.metrics.cards.register_cards`), in key order; the cards
    cfcheck ships (shared, or a bundled kind's own: :func:`~cfcheck.metrics.cards.is_bundled`) and keys
    no card has are left out.

    Args:
        keys: card keys (a score's metric key ``card:variant`` counts as its card).

    Returns:
        Card key → :func:`card_to_json` of the card.
    """
    from cfcheck.metrics.cards import CARDS, is_bundled
    from cfcheck.metrics.key import MetricKey

    found = {MetricKey.card_part(key) for key in keys}
    return {key: card_to_json(CARDS[key]) for key in sorted(found) if key in CARDS and not is_bundled(key)}
