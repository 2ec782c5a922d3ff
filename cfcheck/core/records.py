"""Score records: one measured property of one task, the unit of every scorecard.

A record is plain data (JSON-serialisable through :meth:`ScoreRecord.to_dict`) so records can
cross pytest-xdist worker boundaries and be merged, compared with a baseline and rendered.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any


@dataclass
class ScoreRecord:
    nodeid: str
    suite: str  # property family: validity, closeness, realism, random_classifier, contract
    metric: str  # metric card key
    task: str  # e.g. "cnn/ideal/seed0", unique within its kind and domain
    value: float
    n: int
    direction: str  # "higher", "lower" or "none"
    ci_low: float = math.nan
    ci_high: float = math.nan
    threshold: str | None = None  # human readable, e.g. ">= 0.8"
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

    @property
    def passed(self) -> bool | None:
        """True for pass, False for fail and error, None for inconclusive or no bar."""
        return {"pass": True, "fail": False, "error": False}.get(self.verdict or "")

    @property
    def key(self) -> str:
        """The record's identity across runs: kind, domain, suite, metric and task."""
        return identity_key(self.kind, self.domain, self.suite, self.metric, self.task)

    @property
    def legacy_key(self) -> str:
        """The identity scorecards of format 2 used (no kind or domain)."""
        return f"{self.metric}[{self.task}]"

    def to_dict(self, with_samples: bool = True) -> dict[str, Any]:
        """The record as JSON-safe plain data (fresh lists and dicts; non-finite floats as None),
        without the per-input samples and set features unless ``with_samples``."""
        left_out = () if with_samples else _PER_INPUT_FIELDS
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in left_out}
        data["passed"] = self.passed  # derived; kept in the JSON for readers of older scorecards
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
        return cls(**values)


_PER_INPUT_FIELDS = ("samples", "sample_labels", "set_features")


def identity_key(kind: str, domain: str, suite: str, metric: str, task: str) -> str:
    return f"{kind}/{domain}/{suite}/{metric}[{task}]"


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
