"""A metric's identity: :class:`MetricKey`, a card key and an optional variant.

A score names the card that defines it and, where one card is scored several times on a task, the
variant that tells the scores apart (an oracle, an attribute, a layer, an order): the card
``oracle_score`` scored with the oracle ``oracle_lenet``. Scorecards, baselines and calibration files
write it as ``card:variant`` (:meth:`MetricKey.parse` reads that, ``str(key)`` writes it); a domain's
bars file and the user's ``[tool.cfcheck]`` tables spell it ``card_variant``
(:attr:`MetricKey.bar_key`). This module is the one place that knows both spellings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MetricKey"]

#: separates the card from the variant in a score's name (``oracle_score:oracle_lenet``)
SEPARATOR = ":"
#: separates them in a bar key (``road_gap_morf``)
BAR_SEPARATOR = "_"


@dataclass(frozen=True, order=True)
class MetricKey:
    """A card key and an optional variant.

    Example:
        >>> key = MetricKey.parse("road_gap:morf")
        >>> key.card, key.variant, str(key), key.bar_key
        ('road_gap', 'morf', 'road_gap:morf', 'road_gap_morf')
        >>> str(MetricKey("goar_gap")), MetricKey.parse("goar_gap").variant is None
        ('goar_gap', True)
    """

    card: str
    variant: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.card, str) or not self.card or SEPARATOR in self.card:
            raise ValueError(f"a metric key's card must be a non-empty name without {SEPARATOR!r}, got {self.card!r}")
        if self.variant is not None and (not isinstance(self.variant, str) or not self.variant):
            raise ValueError(f"a metric key's variant must be a non-empty string or None, got {self.variant!r}")

    @classmethod
    def parse(cls, text: str | MetricKey) -> MetricKey:
        """``"card"`` or ``"card:variant"`` (the variant may itself hold ":"); a key is returned as it is."""
        if isinstance(text, MetricKey):
            return text
        if not isinstance(text, str):
            raise TypeError(f"a metric key is a string such as 'oracle_score:oracle_lenet', got {text!r}")
        card, separator, variant = text.partition(SEPARATOR)
        if separator and not variant:
            raise ValueError(f"metric key {text!r} ends in {SEPARATOR!r}: name the variant or leave the separator out")
        return cls(card, variant if separator else None)

    @staticmethod
    def card_part(text: object) -> str:
        """The card part of a score's name as a scorecard writes it, without validating the name: for
        views of scorecards read from disk, which render whatever they hold (``"<x-:"`` → ``"<x-"``)."""
        return str(text).partition(SEPARATOR)[0]

    @classmethod
    def from_bar_key(cls, bar_key: str, card_keys: Iterable[str]) -> MetricKey:
        """The key a bar key names: the longest card in ``card_keys`` it equals or starts with plus "_"
        (``road_gap_morf`` → ``road_gap:morf``; ``d1_5`` stays the card ``d1_5`` where that card is known);
        a key with ":" is parsed as it is, and one no card prefixes is its own card."""
        if SEPARATOR in bar_key:
            return cls.parse(bar_key)
        known = set(card_keys)
        if bar_key in known:
            return cls(bar_key)
        prefixes = [card for card in known if bar_key.startswith(card + BAR_SEPARATOR)]
        if not prefixes:
            return cls(bar_key)
        card = max(prefixes, key=len)
        return cls(card, bar_key[len(card) + len(BAR_SEPARATOR) :])

    def with_variant(self, variant: str | None) -> MetricKey:
        return MetricKey(self.card, variant)

    @property
    def bar_key(self) -> str:
        """The spelling of a domain's bars file and of ``[tool.cfcheck]`` tables: ``card_variant``."""
        return self.card if self.variant is None else f"{self.card}{BAR_SEPARATOR}{self.variant}"

    def __str__(self) -> str:
        """The spelling of scorecards, baselines and calibration files: ``card:variant``."""
        return self.card if self.variant is None else f"{self.card}{SEPARATOR}{self.variant}"
