"""What names a score: :class:`MetricKey` (a card and an optional variant) and :class:`ScoreId` (kind,
domain, suite, metric key and task), each with one spelling and one parser.

A score names the card that defines it and, where one card is scored several times on a task, the
variant that tells the scores apart (an oracle, an attribute, a layer, an order): the card
``oracle_score`` scored with the oracle ``oracle_lenet`` is ``oracle_score:oracle_lenet``, everywhere
(scorecards, baselines, bars and calibration files, ``[tool.cfcheck]`` tables). Files written before
that one spelling keyed variants ``card_variant``; :meth:`MetricKey.read` translates them on read.

A score's identity across runs is ``kind/domain/suite/metric[task]``: :meth:`ScoreId.serialise`
writes it and :meth:`ScoreId.parse` reads it; no other code builds or splits that text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MetricKey", "ScoreId"]

#: separates the card from the variant in a score's name (``oracle_score:oracle_lenet``)
SEPARATOR = ":"
#: separated them in files written before one spelling (``road_gap_morf``); read by :meth:`MetricKey.read`
OLD_SEPARATOR = "_"


@dataclass(frozen=True, order=True)
class MetricKey:
    """A card key and an optional variant.

    Example:
        >>> key = MetricKey.parse("road_gap:morf")
        >>> key.card, key.variant, str(key)
        ('road_gap', 'morf', 'road_gap:morf')
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

    @classmethod
    def read(cls, text: str, card_keys: Iterable[str]) -> MetricKey:
        """A key as a stored file or a user's settings hold it: ``card:variant`` (:meth:`parse`), or the
        spelling of files written before one spelling, ``card_variant``: split after the longest card in
        ``card_keys`` it starts with plus "_" (``road_gap_morf`` → ``road_gap:morf``; ``d1_5`` stays the
        card ``d1_5`` where that card is known); a name no card prefixes is its own card."""
        if SEPARATOR in text:
            return cls.parse(text)
        known = set(card_keys)
        if text in known:
            return cls(text)
        prefixes = [card for card in known if text.startswith(card + OLD_SEPARATOR)]
        if not prefixes:
            return cls(text)
        card = max(prefixes, key=len)
        return cls(card, text[len(card) + len(OLD_SEPARATOR) :])

    @staticmethod
    def card_part(text: object) -> str:
        """The card part of a score's name as a scorecard writes it, without validating the name: for
        views of scorecards read from disk, which render whatever they hold (``"<x-:"`` → ``"<x-"``)."""
        return str(text).partition(SEPARATOR)[0]

    def __str__(self) -> str:
        """The one spelling: ``card`` or ``card:variant``."""
        return self.card if self.variant is None else f"{self.card}{SEPARATOR}{self.variant}"


def read_keyed(entries: Mapping[str, Any], card_keys: Iterable[str]) -> dict[str, Any]:
    """``entries`` with each key in the one spelling (:meth:`MetricKey.read`), for a file's table keyed by
    metric; ValueError where two keys name one metric (``road_gap_morf`` beside ``road_gap:morf``)."""
    known = tuple(card_keys)
    out: dict[str, Any] = {}
    for text, value in entries.items():
        key = str(MetricKey.read(str(text), known))
        if key in out:
            raise ValueError(f"metric {key!r} is keyed twice (once as {text!r}): keep one entry")
        out[key] = value
    return out


#: what a score identity's kind, domain and suite must not hold, and its metric key neither ("/" aside)
_FORBIDDEN = ("/", "[", "]")


@dataclass(frozen=True, order=True)
class ScoreId:
    """A score's identity across runs: ``kind/domain/suite/metric[task]``.

    ``kind``, ``domain`` and ``suite`` are non-empty names without "/", "[" or "]" ("-" where a score has
    none); the metric key's text holds no "[" or "]" (it may hold "/": a domain's load check names its
    spec, a path); the task is any non-empty text, brackets and slashes included (it is what lies between
    the first "[" and the final "]").

    Example:
        >>> score = ScoreId("my_kind", "my_domain", "validity", MetricKey("oracle_score", "oracle_a"), "model/seed0")
        >>> text = score.serialise()
        >>> text, ScoreId.parse(text) == score, score.legacy()
        ('my_kind/my_domain/validity/oracle_score:oracle_a[model/seed0]', True, 'oracle_score:oracle_a[model/seed0]')
    """

    kind: str
    domain: str
    suite: str
    metric: MetricKey
    task: str

    def __post_init__(self) -> None:
        for name in ("kind", "domain", "suite"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or any(c in value for c in _FORBIDDEN):
                raise ValueError(
                    f"a score identity's {name} must be a non-empty name without '/', '[' or ']', got {value!r}"
                )
        if not isinstance(self.metric, MetricKey):
            raise TypeError(f"a score identity's metric is a MetricKey (MetricKey.parse(text)), got {self.metric!r}")
        if any(c in str(self.metric) for c in "[]"):
            raise ValueError(f"a score identity's metric key must not hold '[' or ']', got {str(self.metric)!r}")
        if not isinstance(self.task, str) or not self.task:
            raise ValueError(f"a score identity's task must be non-empty text, got {self.task!r}")

    @classmethod
    def of(cls, kind: str, domain: str, suite: str, metric: str | MetricKey, task: str) -> ScoreId:
        """The identity of these parts, the metric given as a key or its text (:meth:`MetricKey.parse`)."""
        return cls(kind, domain, suite, MetricKey.parse(metric), task)

    @classmethod
    def from_score(cls, score: Mapping[str, Any]) -> ScoreId:
        """The identity of a scorecard's score (a dict as :meth:`ScoreRecord.to_dict` writes it); a score of
        a scorecard before kinds and domains (format 2 and older) has "-" for them.

        Raises:
            ValueError: a part is missing or cannot be part of an identity (the message names it).
        """
        missing = [name for name in ("suite", "metric", "task") if score.get(name) in (None, "")]
        if missing:
            raise ValueError(f"a score without {' or '.join(missing)} has no identity: {dict(score)!r}")
        return cls.of(
            str(score.get("kind") or "-"),
            str(score.get("domain") or "-"),
            str(score["suite"]),
            str(score["metric"]),
            str(score["task"]),
        )

    def serialise(self) -> str:
        """``kind/domain/suite/metric[task]``: the key of scorecards' comparisons, baselines and calibration values."""
        return f"{self.kind}/{self.domain}/{self.suite}/{self.metric}[{self.task}]"

    @classmethod
    def parse(cls, text: str) -> ScoreId:
        """The identity :meth:`serialise` wrote.

        Raises:
            ValueError: ``text`` is not ``kind/domain/suite/metric[task]`` (the message says which part is wrong).
        """
        if not isinstance(text, str):
            raise TypeError(f"a score identity is text such as 'kind/domain/validity/tcv[model/seed0]', got {text!r}")
        head, bracket, rest = text.partition("[")
        parts = head.split("/", 3)
        if not bracket or not rest.endswith("]") or len(parts) != 4:
            raise ValueError(f"not a score identity kind/domain/suite/metric[task]: {text!r}")
        kind, domain, suite, metric = parts
        try:
            return cls.of(kind, domain, suite, metric, rest[:-1])
        except ValueError as error:
            raise ValueError(f"not a score identity kind/domain/suite/metric[task]: {text!r} ({error})") from None

    def legacy(self) -> str:
        """``metric[task]``: the identity in scorecards of format 2 and older (no kind, domain or suite)."""
        return f"{self.metric}[{self.task}]"

    def __str__(self) -> str:
        return self.serialise()
