"""Recording a score and asserting its bar: the last step of every conformance test.

``cfcheck_score(metric, per_sample_values)`` summarises the values (mean, bootstrap 95% CI,
n), records them with the threshold and direction from the metric card and the profile,
compares with the baseline, and fails the test with one readable line when the bar is missed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest
import torch

from cfcheck.metrics.cards import get_card
from cfcheck.metrics.stats import summarize
from cfcheck.records import ScoreRecord

if TYPE_CHECKING:
    from cfcheck.session import CfcheckSession


class ScoreRecorder:
    def __init__(self, session: CfcheckSession, request: pytest.FixtureRequest) -> None:
        self.session = session
        self.request = request

    @property
    def task_id(self) -> str:
        callspec = getattr(self.request.node, "callspec", None)
        task = callspec.params.get("cfcheck_task") if callspec else None
        return task.id if task is not None else "-"

    @property
    def suite(self) -> str:
        name = self.request.node.module.__name__.rsplit(".", 1)[-1]
        return name.removeprefix("test_")

    def __call__(
        self,
        metric: str,
        samples: torch.Tensor | Sequence[float] | None = None,
        *,
        value: float | None = None,
        ci: tuple[float, float] | None = None,
        n: int | None = None,
        labels: dict[str, list[Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ScoreRecord:
        """Record ``metric`` from per-sample ``samples`` (or a set-level ``value`` with its ``ci``
        and ``n``), then fail the test if it misses its threshold or regressed."""
        __tracebackhide__ = True
        card = get_card(metric.split(":", 1)[0])
        profile = self.session.profile
        if samples is not None:
            values = torch.as_tensor(samples, dtype=torch.float64).flatten()
            summary = summarize(values, n_resamples=profile.bootstrap_resamples, seed=self.session.seed)
            value, (ci_low, ci_high), n = summary.value, (summary.ci_low, summary.ci_high), summary.n
            sample_list = values.tolist()
        elif value is not None and n is not None:
            ci_low, ci_high = ci if ci is not None else (math.nan, math.nan)
            sample_list = []
        else:
            raise TypeError("cfcheck_score needs per-sample values, or value= and n= for set-level metrics")
        threshold = profile.threshold(metric.replace(":", "_")) or profile.threshold(card.key)
        direction = card.direction
        if direction == "none" and threshold is not None:  # e.g. LVS: wanted high for the target only
            direction = "higher" if threshold.kind == "min" else "lower"
        record = ScoreRecord(
            nodeid=self.request.node.nodeid,
            suite=self.suite,
            metric=metric,
            task=self.task_id,
            value=float(value),
            n=int(n),
            direction=direction,
            ci_low=float(ci_low),
            ci_high=float(ci_high),
            threshold=threshold.describe() if threshold else None,
            passed=threshold.passes(float(value)) if threshold else None,
            samples=sample_list,
            sample_labels=labels or {},
            extra=extra or {},
        )
        regression = None
        if self.session.baseline is not None:
            tolerance = profile.tolerances.get(metric.replace(":", "_"), profile.tolerances.get(card.key, 0.0))
            regression = self.session.baseline.compare(record.key, record.value, record.direction, tolerance)
            record.baseline = self.session.baseline.get(record.key)
            record.regressed = regression is not None
        self.session.add_record(record)
        self.request.node.user_properties.append(("cfcheck", record.to_dict(with_samples=False)))
        if record.passed is False:
            pytest.fail(
                f"{metric} = {record.value:.4g} [{record.ci_low:.4g}, {record.ci_high:.4g}] (n={record.n}) "
                f"on {record.task}; required {record.threshold} ({card.name})",
                pytrace=False,
            )
        if regression is not None:
            pytest.fail(regression.describe(), pytrace=False)
        return record
