"""The scorecard as one typed value: what every format of a run (Markdown, HTML, the badge, ``cfcheck
summary`` and a user's format) reads, built once from the scorecard JSON (:meth:`Scorecard.from_json`).

A :class:`Scorecard` holds its scores (:class:`Score`) in score order and groups them the ways the
pages show them: per (kind, domain) a :class:`Section` with its suites, its protocol and what the
controls reached on it (:class:`~cfcheck.reporting.calibration_section.SectionCalibration`); per kind;
per (kind, suite). It says the run's status, its headline (:class:`Headline`), its verdict counts, its
provenance (:class:`Provenance`, with what the method read of the domain's answer) and its protocols.
Nothing here imports a domain: everything a format draws is in the JSON. The metric cards cfcheck does
not bundle (a kind's own) and such a kind's facts (its task groups' label) are in the JSON too (its
``cards`` and ``kinds`` sections); :meth:`Scorecard.card` and :meth:`Scorecard.task_group_label` read
them there first, then from the registries, so a scorecard renders where the kind is not installed.

Example:
    >>> card = Scorecard.from_json({"method": "m", "status": "complete", "profile": {"name": "quick"},
    ...     "provenance": {}, "scores": [{"kind": "k", "domain": "d", "suite": "s", "metric": "a",
    ...     "task": "t/seed0", "value": 0.9, "n": 10, "threshold": ">= 0.8", "verdict": "pass"}]})
    >>> [(key, list(section.suites)) for key, section in card.sections.items()], card.headline.word
    ([(('k', 'd'), ['s'])], 'PASS')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from cfcheck.metrics.card import MetricCard
from cfcheck.metrics.card_json import cards_from_json
from cfcheck.reporting.calibration_section import SectionCalibration, read_calibration
from cfcheck.reporting.headline import Headline, headline_of, kinds_by_judgement
from cfcheck.reporting.protocol_text import protocol_label
from cfcheck.reporting.scores import Score, ScoreGroup, text_or
from cfcheck.reporting.tables import KNOWN_FAILURE, score_rows

__all__ = ["Headline", "Provenance", "Score", "ScoreGroup", "Scorecard", "Section", "headline"]


@dataclass(frozen=True)
class Section:
    """The scores of one kind on one domain: its suites in order, its protocol entry (None: the
    scorecard records none) and what the controls reached on it (None: the scorecard records none)."""

    kind: str
    domain: str
    scores: ScoreGroup
    protocol: Mapping[str, Any] | None
    calibration: SectionCalibration | None

    @cached_property
    def suites(self) -> dict[str, ScoreGroup]:
        return self.scores.by_suite()


@dataclass(frozen=True)
class Provenance:
    """Where and how the run was made; ``answer_read``: what the method read of the domain's answer
    (``{"what": [...], "calls": N}``; None: nothing, a valid submission). ``data``: every field."""

    cfcheck_version: str | None
    cfcheck_commit: str | None
    started: str | None
    finished: str | None
    answer_read: Mapping[str, Any] | None
    data: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> Provenance:
        data = data if isinstance(data, Mapping) else {}
        read = data.get("answer_read")
        return cls(
            cfcheck_version=data.get("cfcheck_version"),
            cfcheck_commit=data.get("cfcheck_commit"),
            started=data.get("started"),
            finished=data.get("finished"),
            answer_read=dict(read) if isinstance(read, Mapping) and read else None,
            data=data,
        )

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


@dataclass(frozen=True)
class Scorecard:
    """A run's scorecard (see the module's docstring). ``calibration`` is None for a scorecard written
    before cfcheck recorded the controls' values in it (its charts have no markers, its cards no
    measured values); ``cards``: its own definitions of the cards cfcheck does not bundle (key → card,
    :mod:`cfcheck.metrics.card_json`); ``kinds``: kind → its facts, for the kinds cfcheck does not
    bundle (``{"task_group_label": "..."}``); ``data`` is the JSON it was read from."""

    method: str
    status: str
    profile: Mapping[str, Any]
    outcomes: Mapping[str, int]
    provenance: Provenance
    costs: Mapping[str, Any]
    protocols: Mapping[str, Mapping[str, Any]]
    scores: ScoreGroup
    calibration: Mapping[tuple[str, str], SectionCalibration] | None
    format: int | None = None
    cards: Mapping[str, MetricCard] = field(default_factory=dict)
    kinds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scorecard:
        """The model of a scorecard JSON (a dict as ``scorecard.json`` holds it).

        Raises:
            ValueError: ``data`` is no scorecard (no ``scores`` list, or a score that is no object), or a
                card of its ``cards`` section cannot be read (naming the card).
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("scores"), list):
            raise ValueError("not a cfcheck scorecard: expected an object with a 'scores' list")
        profile = data.get("profile")
        protocols = data.get("protocols")
        kinds = data.get("kinds")
        return cls(
            method=text_or(data.get("method"), "?"),
            status=text_or(data.get("status"), "?"),
            profile=profile if isinstance(profile, Mapping) else {},
            outcomes=data.get("outcomes") or {},
            provenance=Provenance.from_json(data.get("provenance")),
            costs=data.get("costs") or {},
            protocols=protocols if isinstance(protocols, Mapping) else {},
            scores=ScoreGroup(tuple(Score.from_json(score) for score in data["scores"])),
            calibration=read_calibration(data.get("calibration")) if "calibration" in data else None,
            format=data.get("format"),
            cards=cards_from_json(data.get("cards")),
            kinds={str(k): v for k, v in kinds.items() if isinstance(v, Mapping)} if isinstance(kinds, Mapping) else {},
            data=data,
        )

    @classmethod
    def of(cls, scorecard: Scorecard | Mapping[str, Any]) -> Scorecard:
        """``scorecard`` itself, or the model of a scorecard JSON."""
        return scorecard if isinstance(scorecard, Scorecard) else cls.from_json(scorecard)

    def card(self, key: str) -> MetricCard | None:
        """The metric card ``key``: the scorecard's own definition (its ``cards`` section), else the
        registry's (the kinds' own cards included); None where neither has it."""
        from cfcheck.kinds.registry import loaded_cards

        return self.cards.get(key) or loaded_cards().get(key)

    @cached_property
    def card_order(self) -> dict[str, int]:
        """Card key → its place in the listing of cards: the registry's order, then the scorecard's own
        cards that the registry lacks."""
        from cfcheck.kinds.registry import loaded_cards

        keys = dict.fromkeys([*loaded_cards(), *self.cards])
        return {key: i for i, key in enumerate(keys)}

    def task_group_label(self, kind: str) -> str:
        """What the first part of a task id of ``kind`` names ("classifier"): the scorecard's ``kinds``
        section, else the kind's :class:`~cfcheck.kinds.base.KindSpec`; "task" for a kind neither knows."""
        label = (self.kinds.get(kind) or {}).get("task_group_label")
        if isinstance(label, str) and label:
            return label
        from cfcheck.kinds import kind_spec

        try:
            return kind_spec(kind).task_group_label
        except ValueError:  # a kind not installed here, or a record without a kind ("-")
            return "task"

    @property
    def profile_name(self) -> str:
        return text_or(self.profile.get("name"))

    @property
    def domain_facts(self) -> Mapping[str, Any]:
        """Domain name → what the run recorded of it (where its bars come from, its own bars, …)."""
        facts = self.profile.get("domains")
        return facts if isinstance(facts, Mapping) else {}

    @property
    def baseline(self) -> Mapping[str, Any]:
        found = self.data.get("baseline")
        return found if isinstance(found, Mapping) else {}

    @cached_property
    def sections(self) -> dict[tuple[str, str], Section]:
        """Per (kind, domain), in score order."""
        return {
            (kind, domain): Section(
                kind,
                domain,
                group,
                self.protocol_of(kind, domain),
                (self.calibration or {}).get((kind, domain)),
            )
            for (kind, domain), group in self.scores.by_section().items()
        }

    def protocol_of(self, kind: str, domain: str) -> Mapping[str, Any] | None:
        """The protocol entry of ``kind`` on ``domain`` at the run's profile (None: none recorded)."""
        found = self.protocols.get(f"{kind}/{domain}/{self.profile_name}")
        return found if isinstance(found, Mapping) and found.get("digest") else None

    @property
    def protocol_labels(self) -> list[str]:
        """Every protocol's label, in name order (empty for a scorecard written before protocols)."""
        return [protocol_label(self.protocols[key]) for key in sorted(self.protocols)]

    def rows(self) -> list[list[str]]:
        """The full table of scores (:data:`~cfcheck.reporting.tables.HEADER`), one row per score."""
        return score_rows({"scores": self.scores.data()})

    @property
    def failing_count(self) -> int:
        return len(self.scores.failing())

    @property
    def known_failure_count(self) -> int:
        """Scores that missed their bars in the run's baseline too, not worse (they do not fail the run)."""
        return sum(1 for score in self.scores if score.baseline_status == KNOWN_FAILURE)

    @property
    def vanished_count(self) -> int:
        """The baseline's scores that this run's tests did not record (they fail the run)."""
        return len(self.baseline.get("vanished") or [])

    def kinds_by_judgement(self) -> tuple[list[str], dict[str, int]]:
        """The kinds judged, and those only reported (:func:`~cfcheck.reporting.headline.kinds_by_judgement`)."""
        return kinds_by_judgement(self.scores)

    @cached_property
    def headline(self) -> Headline:
        """The overall verdict (:func:`~cfcheck.reporting.headline.headline_of`): "FAIL: 3 of 5 suites have
        failing scores", "PASS: …", "INCOMPLETE: …" for a run cut short; "NOT A VALID SUBMISSION: the method
        read …; PASS: …" where the method read the domain's answer."""
        return headline_of(
            self.scores,
            status=self.status,
            vanished=self.vanished_count,
            domain_facts=self.domain_facts,
            answer_read=self.provenance.answer_read,
        )


def headline(scorecard: Scorecard | Mapping[str, Any]) -> Headline:
    """The headline of a scorecard or a scorecard JSON (:attr:`Scorecard.headline`)."""
    return Scorecard.of(scorecard).headline
