"""Score records: one measured property of one task, the unit of every scorecard.

A record is plain data (JSON-serialisable through :meth:`ScoreRecord.to_dict`) so records can
cross pytest-xdist worker boundaries and be merged, compared with a baseline and rendered.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from cfcheck.core.keys import ScoreId
from cfcheck.core.thresholds import RecordedBar


@dataclass
class ScoreRecord:
    """One score: what was measured (its identity, :attr:`id`), the value with its interval, the bar it was
    judged against (:attr:`bar`, data) and the verdict."""

    nodeid: str
    suite: str  # property family: validity, closeness, realism, random_classifier, contract
    metric: str  # metric card key
    task: str  # e.g. "cnn/ideal/seed0", unique within its kind and domain
    value: float
    n: int
    direction: str  # "higher", "lower" or "none"
    ci_low: float = math.nan
    ci_high: float = math.nan
    #: the bar's text, for display only (``">= 0.8"``, ``"<= 2 × floor = 19.22"``): derived from :attr:`bar`; a
    #: record read from a scorecard written before bars were data (format 3 without ``bar``) has the text alone
    threshold: str | None = None
    #: "pass", "fail", "inconclusive" (the 95% CI straddles the bar), "error" (no score could be
    #: computed; ``reason`` says why) or None (no bar: reported without a verdict)
    verdict: str | None = None
    reason: str | None = None  # why a score could not be computed
    baseline: float | None = None
    regressed: bool | None = None  # None when no baseline was given
    samples: list[float] = field(default_factory=list)
    sample_labels: dict[str, list[Any]] = field(default_factory=dict)  # e.g. source, target
    extra: dict[str, Any] = field(default_factory=dict)
    #: a set-level score's per-input features and real reference (:meth:`cfcheck.core.set_features.SetFeatures.encode`),
    #: written to the run's ``set_features.npz``, never to the scorecard JSON
    set_features: dict[str, Any] = field(default_factory=dict)
    kind: str = "-"  # the method kind whose suite measured it ("vce", "scm", ...)
    domain: str = "-"  # the domain its task was drawn from
    #: how the score compares with the run's baseline (:data:`cfcheck.reporting.tables.STATUSES`: "known_failure",
    #: "new_failure", "regressed", "fixed", ...); None when no baseline was given
    baseline_status: str | None = None
    #: an inconclusive verdict that fails the run under the profile's policy (``inconclusive = "fail"``):
    #: the scorecard's headline, badge and failing list count it as the run's exit does
    inconclusive_fails: bool = False
    #: the bar the score was judged against, as data (direction, bound, floor rule and the run's floor);
    #: None: no bar, or a record read from a scorecard written before bars were data
    bar: RecordedBar | None = None

    def __post_init__(self) -> None:
        if self.bar is not None:
            self.threshold = self.bar.describe()

    @property
    def passed(self) -> bool | None:
        """True for pass, False for fail and error, None for inconclusive or no bar."""
        return {"pass": True, "fail": False, "error": False}.get(self.verdict or "")

    @property
    def id(self) -> ScoreId:
        """The record's identity across runs: kind, domain, suite, metric key and task.

        Raises:
            ValueError: a part cannot be part of an identity (:class:`~cfcheck.core.keys.ScoreId` says which).
        """
        return ScoreId.of(self.kind, self.domain, self.suite, self.metric, self.task)

    @property
    def key(self) -> str:
        """:attr:`id` serialised (``kind/domain/suite/metric[task]``)."""
        return self.id.serialise()

    @property
    def legacy_key(self) -> str:
        """The identity scorecards of format 2 used (no kind or domain): ``metric[task]``."""
        return self.id.legacy()

    def to_dict(self, with_samples: bool = True) -> dict[str, Any]:
        """The record as JSON-safe plain data (fresh lists and dicts; non-finite floats as None),
        without the per-input samples and set features unless ``with_samples``."""
        left_out = () if with_samples else _PER_INPUT_FIELDS
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in left_out}
        data["passed"] = self.passed  # derived; kept in the JSON for readers of older scorecards
        data["bar"] = self.bar.to_dict() if self.bar is not None else None
        return {k: _json_safe(v) for k, v in data.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreRecord:
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in known}
        for name in ("value", "ci_low", "ci_high"):
            if values.get(name) is None:
                values[name] = math.nan
        if "verdict" not in data and data.get("passed") is not None:  # scorecards before verdicts
            values["verdict"] = "pass" if data["passed"] else "fail"
        if values.get("bar") is not None:  # absent before bars were data: the text alone is kept
            values["bar"] = RecordedBar.from_dict(values["bar"])
        return cls(**values)


_PER_INPUT_FIELDS = ("samples", "sample_labels", "set_features")


def _json_safe(value: Any) -> Any:
    """NaN/inf are not JSON; store them as None so scorecards stay valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_json_safe(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return _json_safe(asdict(value))
    return value
