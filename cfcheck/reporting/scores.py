"""A scorecard's scores, typed (:class:`Score`), and groups of them (:class:`ScoreGroup`) with the
groupings the pages use; the scorecard itself is :class:`cfcheck.reporting.model.Scorecard`."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from cfcheck.core.keys import MetricKey, ScoreId
from cfcheck.core.thresholds import RecordedBar
from cfcheck.reporting.tables import (
    count_verdicts,
    format_value,
    is_failing,
    task_group,
    verdict_category,
    worst_category,
)

__all__ = ["Score", "ScoreGroup"]

K = TypeVar("K", bound=Hashable)


def text_or(value: Any, default: str = "-") -> str:
    """``value`` as text, ``default`` for None (what a scorecard before a field was recorded lacks)."""
    return default if value is None else str(value)


def _finite(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


@dataclass(frozen=True)
class Score:
    """One score as the scorecard records it: its identity's parts, its value and 95% interval, its bar
    (the text shown, and the bar as data where the scorecard records it), its verdict and how it stands
    against the run's baseline. ``data`` is the JSON entry itself (for a format that shows more)."""

    kind: str
    domain: str
    suite: str
    metric: str
    task: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: Any
    threshold: str | None
    bar: RecordedBar | None
    verdict: str | None
    reason: str | None
    baseline_status: str | None
    regressed: bool
    extra: Mapping[str, Any]
    data: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        """A score of the scorecard's ``scores`` list; what an older scorecard lacks reads as "-" or None."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a scorecard's score is an object, got {data!r}")
        bar = data.get("bar")
        try:
            recorded = RecordedBar.from_dict(bar) if isinstance(bar, Mapping) else None
        except ValueError:  # a bar that is no bar: its text is shown, nothing is drawn
            recorded = None
        extra = data.get("extra")
        return cls(
            kind=text_or(data.get("kind")),
            domain=text_or(data.get("domain")),
            suite=text_or(data.get("suite")),
            metric=text_or(data.get("metric")),
            task=text_or(data.get("task")),
            value=data.get("value"),
            ci_low=data.get("ci_low"),
            ci_high=data.get("ci_high"),
            n=data.get("n"),
            threshold=data.get("threshold") or None,
            bar=recorded,
            verdict=data.get("verdict"),
            reason=data.get("reason") or None,
            baseline_status=data.get("baseline_status"),
            regressed=bool(data.get("regressed")),
            extra=extra if isinstance(extra, Mapping) else {},
            data=data,
        )

    @property
    def category(self) -> str:
        """The verdict as one of :data:`~cfcheck.reporting.tables.VERDICT_ORDER` ("none": no bar)."""
        return verdict_category(self.data)

    @property
    def failing(self) -> bool:
        """Whether the score fails the run (:func:`~cfcheck.reporting.tables.is_failing`)."""
        return is_failing(self.data)

    @property
    def value_text(self) -> str:
        """The value and its 95% interval, e.g. "0.91 [0.85, 0.96]"."""
        return format_value(self.data)

    @property
    def task_group(self) -> str:
        """The first part of the task id (what a kind's summary table has one row per)."""
        return task_group(self.data)

    @property
    def card(self) -> str:
        """The metric card's key (the metric key without its variant)."""
        return MetricKey.card_part(self.metric)

    @property
    def identity(self) -> ScoreId | None:
        """The score's identity (None where its names make none: an old or a hand-made record)."""
        try:
            return ScoreId.from_score(self.data)
        except ValueError:
            return None

    @property
    def bar_bound(self) -> float | None:
        """The bound the score was held to, from its recorded bar (None: no bar as data, or a
        floor-relative bar without its floor)."""
        return _finite(self.bar.value) if self.bar is not None else None

    @property
    def finite_value(self) -> float | None:
        return _finite(self.value)


def _grouped(scores: Sequence[Score], key: Callable[[Score], K]) -> dict[K, ScoreGroup]:
    """``scores`` grouped by ``key``, the groups in order of first appearance."""
    groups: dict[K, list[Score]] = {}
    for score in scores:
        groups.setdefault(key(score), []).append(score)
    return {name: ScoreGroup(tuple(members)) for name, members in groups.items()}


@dataclass(frozen=True)
class ScoreGroup:
    """Scores in scorecard order, with their verdict counts and the groupings the pages use (each a
    dict of groups in order of first appearance)."""

    scores: tuple[Score, ...] = ()

    def __iter__(self) -> Iterator[Score]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    def __bool__(self) -> bool:
        return bool(self.scores)

    @cached_property
    def counts(self) -> dict[str, int]:
        """Scores per verdict category (every category, zeros included)."""
        return count_verdicts([score.data for score in self.scores])

    @property
    def worst(self) -> str | None:
        """The most severe category with a score (None: no scores)."""
        return worst_category(self.counts)

    @property
    def any_failing(self) -> bool:
        return any(score.failing for score in self.scores)

    def failing(self) -> ScoreGroup:
        """The scores that fail the run."""
        return ScoreGroup(tuple(score for score in self.scores if score.failing))

    def data(self) -> list[Mapping[str, Any]]:
        """The JSON entries (for the helpers that read scores as the scorecard writes them)."""
        return [score.data for score in self.scores]

    def by_kind(self) -> dict[str, ScoreGroup]:
        return _grouped(self.scores, lambda s: s.kind)

    def by_section(self) -> dict[tuple[str, str], ScoreGroup]:
        """Per (kind, domain)."""
        return _grouped(self.scores, lambda s: (s.kind, s.domain))

    def by_suite(self) -> dict[str, ScoreGroup]:
        """Per suite name (within one kind: suites of different kinds share names)."""
        return _grouped(self.scores, lambda s: s.suite)

    def by_kind_suite(self) -> dict[tuple[str, str], ScoreGroup]:
        """Per (kind, suite)."""
        return _grouped(self.scores, lambda s: (s.kind, s.suite))

    def by_kind_suite_metric(self) -> dict[tuple[str, str, str], ScoreGroup]:
        return _grouped(self.scores, lambda s: (s.kind, s.suite, s.metric))

    def by_metric(self) -> dict[str, ScoreGroup]:
        return _grouped(self.scores, lambda s: s.metric)

    def by_task(self) -> dict[str, ScoreGroup]:
        return _grouped(self.scores, lambda s: s.task)

    def by_task_group(self) -> dict[str, ScoreGroup]:
        """Per first part of the task id (a kind's summary rows)."""
        return _grouped(self.scores, lambda s: s.task_group)

    def by_section_task(self) -> dict[tuple[str, str, str], ScoreGroup]:
        """Per (kind, domain, task): what an example grid of one task shows the verdicts of."""
        return _grouped(self.scores, lambda s: (s.kind, s.domain, s.task))
