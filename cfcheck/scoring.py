"""Recording a score and asserting its bar: the last step of every conformance test.

``cfcheck_score(metric, per_sample_values)`` summarises the values (mean, 95% CI, n), records
them with the bar and direction from the metric's card (or the user's override), judges the
verdict — pass, fail, or inconclusive when the interval straddles the bar — compares with the
baseline, and ends the test with one readable line when the bar is missed.
``cfcheck_score.unavailable(metric, reason)`` records a score that could not be computed, so a
scorecard never silently lacks it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest
import torch

from cfcheck.baseline import Judgement
from cfcheck.core.records import ScoreRecord
from cfcheck.core.set_features import SetFeatures
from cfcheck.core.thresholds import RecordedBar
from cfcheck.kinds.declaration import KindError
from cfcheck.kinds.registry import kind_cards
from cfcheck.metrics.cards import CARDS, PROPORTION_UNITS, Bar, MetricCard, card_of
from cfcheck.metrics.key import MetricKey
from cfcheck.metrics.stats import summarize, verdict
from cfcheck.reporting import tables as baseline_status

if TYPE_CHECKING:
    from cfcheck.session import CfcheckSession


class _NeverRaised(Exception):
    """The only exception a fix's xfail mark would excuse: none is raised, so a failure after the fix's
    score is recorded still fails its test."""


class ScoreRecorder:
    def __init__(self, session: CfcheckSession, node: pytest.Item) -> None:
        self.session = session
        self.node = node

    @property
    def _task(self) -> Any:
        callspec = getattr(self.node, "callspec", None)
        return callspec.params.get("cfcheck_task") if callspec else None

    @property
    def task_id(self) -> str:
        task = self._task
        return task.id if task is not None else "-"

    @property
    def kind(self) -> str:
        marker = self.node.get_closest_marker("cfcheck_kind")
        return str(marker.args[0]) if marker else "-"

    @property
    def domain(self) -> str:
        """The task's domain; for a test of one resolved domain without a task (its load check), that
        domain's name; else "-" (a spec that could not be resolved names no domain)."""
        task = self._task
        if task is not None:
            return str(task.domain_name)
        callspec = getattr(self.node, "callspec", None)
        name = callspec.params.get("cfcheck_domain_spec") if callspec else None
        return str(name) if name is not None and name not in self.session.broken_domains else "-"

    @property
    def suite(self) -> str:
        module = getattr(self.node, "module", None)
        name = module.__name__.rsplit(".", 1)[-1] if module is not None else self.node.path.stem
        return name.removeprefix("test_")

    def card(self, metric: str | MetricKey) -> MetricCard:
        """The card of ``metric``, refused where no card has its key
        (:class:`~cfcheck.metrics.cards.UnknownMetricKey`) or where the test's kind does not declare it
        (:class:`~cfcheck.kinds.declaration.KindError`: its protocol would not cover the score)."""
        card = card_of(metric)
        declared = kind_cards(self.kind)
        if declared is not None and card.key not in declared:
            raise KindError(
                f"kind {self.kind!r} records the metric {str(metric)!r}, whose card {card.key!r} it does not "
                "declare: add it to the kind's KindDeclaration cards (a protocol covers only its kind's cards)"
            )
        return card

    def bar(self, metric: str | MetricKey) -> tuple[MetricCard, Bar | None]:
        """The card of ``metric`` (``key``, ``key:variant`` or a :class:`MetricKey`) and the bar that
        applies to it; :class:`~cfcheck.metrics.cards.UnknownMetricKey` where no card has its key."""
        card = card_of(metric)
        return card, self.session.bars_for(self.domain).get(metric, card.key)

    def __call__(
        self,
        metric: str | MetricKey,
        samples: torch.Tensor | Sequence[float] | None = None,
        *,
        value: float | None = None,
        ci: tuple[float, float] | None = None,
        n: int | None = None,
        floor: float | None = None,
        labels: dict[str, list[Any]] | None = None,
        extra: dict[str, Any] | None = None,
        set_features: SetFeatures | None = None,
    ) -> ScoreRecord:
        """Record ``metric`` from per-sample ``samples`` (or a set-level ``value`` with its ``ci``
        and ``n``), then end the test by its verdict and the baseline comparison.

        With ``samples``, ``ci`` (optional) replaces the input bootstrap's interval by one the
        caller computed over more than the inputs (e.g. :func:`cfcheck.metrics.stats.crossed_interval`
        over random draws too); the value stays the samples' mean. ``floor`` is the real-vs-real
        floor a floor-relative bar is measured against. A key without a card, or of a card the test's
        kind does not declare, is refused before anything is recorded (:meth:`card`).
        ``set_features`` keeps a set-level score's per-input features and real reference with the
        run (``set_features.npz``), so ``cfcheck compare`` can test two runs' sets against each other.
        """
        __tracebackhide__ = True
        key = MetricKey.parse(metric)
        card = self.card(key)
        metric = str(key)
        profile = self.session.profile
        if samples is not None:
            values = torch.as_tensor(samples, dtype=torch.float64).flatten()
            if values.numel() == 0:
                return self.unavailable(metric, "no samples to score")
            if value is not None:
                raise TypeError("cfcheck_score takes per-sample values or value=, not both (the value is their mean)")
            if ci is not None:
                value, (ci_low, ci_high), n = float(values.mean()), (float(ci[0]), float(ci[1])), values.numel()
            else:
                summary = summarize(
                    values,
                    n_resamples=profile.bootstrap_resamples,
                    seed=self.session.seed,
                    indicators=None if card.units == PROPORTION_UNITS else False,
                )
                value, (ci_low, ci_high), n = summary.value, (summary.ci_low, summary.ci_high), summary.n
            sample_list = values.tolist()
        elif value is not None and n is not None:
            ci_low, ci_high = ci if ci is not None else (math.nan, math.nan)
            sample_list = []
        else:
            raise TypeError("cfcheck_score needs per-sample values, or value= and n= for set-level metrics")
        card, bar = self.bar(key)
        outcome = None
        if bar is not None:
            outcome = verdict(float(value), float(ci_low), float(ci_high), bar.resolve(floor), bar.kind)
        record = self._record(
            card,
            metric,
            value=float(value),
            n=int(n),
            ci=(float(ci_low), float(ci_high)),
            bar=RecordedBar.of(bar, floor) if bar else None,
            verdict=outcome,
            samples=sample_list,
            labels=labels,
            extra=extra,
            set_features=set_features,
        )
        record.inconclusive_fails = outcome == "inconclusive" and profile.inconclusive == "fail"
        judgement = self._judge(record, key, card, outcome)
        self._publish(record)
        summary_text = (
            f"{metric} = {record.value:.4g} [{record.ci_low:.4g}, {record.ci_high:.4g}] (n={record.n}) "
            f"on {record.task}; required {record.threshold}"
        )
        failure = f"{summary_text}: {card.failure_hint or card.name}" if outcome == "fail" else None
        if outcome == "inconclusive" and profile.inconclusive != "pass":
            failure = (
                f"inconclusive: {summary_text}; the 95% interval straddles the bar — run a larger profile "
                "(--cfcheck-profile=standard or full) to decide"
            )
        if judgement is not None:
            self._gate(record, judgement, failure)
        if failure is not None:
            if outcome == "inconclusive" and profile.inconclusive == "xfail":
                pytest.xfail(failure)
            pytest.fail(failure, pytrace=False)
        return record

    def _judge(self, record: ScoreRecord, key: MetricKey, card: MetricCard, outcome: str | None) -> Judgement | None:
        """The score against the run's baseline (None without one), noted on ``record``."""
        baseline, profile = self.session.baseline, self.session.profile
        if baseline is None:
            return None
        failing = outcome == "fail" or (outcome == "inconclusive" and profile.inconclusive == "fail")
        judgement = baseline.judge(
            (record.key, record.legacy_key),
            value=record.value,
            verdict=outcome,
            direction=record.direction,
            tolerance=profile.tolerances.get(str(key), profile.tolerances.get(card.key, 0.0)),
            failing=failing,
            known_failures=profile.known_failures,
        )
        record.baseline = judgement.stored.value if judgement.stored is not None else None
        record.regressed = judgement.regression is not None
        record.baseline_status = judgement.status
        return judgement

    def _gate(self, record: ScoreRecord, judgement: Judgement, failure: str | None) -> None:
        """End the test by the score's status against the baseline; return where its verdict alone decides
        (unchanged, improved, new and passing, or a fix: marked to be reported as XPASS)."""
        __tracebackhide__ = True
        stored = judgement.stored
        was = f"the baseline had {stored.describe()}" if stored is not None else "not in the baseline"
        if judgement.regression is not None:
            detail = f" ({failure})" if failure else ""
            pytest.fail(f"{judgement.regression.describe()}{detail}", pytrace=False)
        if judgement.status == baseline_status.NEW_FAILURE:
            pytest.fail(f"new failure ({was}): {failure}", pytrace=False)
        if judgement.status == baseline_status.KNOWN_FAILURE:
            pytest.xfail(f"known failure ({was}; not worse beyond the tolerance): {failure}")
        if judgement.status == baseline_status.STILL_FAILING:
            pytest.fail(f"{failure} (a known failure: {was}; --cfcheck-known-failures=fail)", pytrace=False)
        if judgement.status in (baseline_status.FIXED, baseline_status.FIXED_STRICT):
            strict = judgement.status == baseline_status.FIXED_STRICT
            reason = (
                f"fixed: {record.metric} = {record.value:.4g} on {record.task} passes its bar {record.threshold}; "
                f"{was}" + ("; refresh the baseline (--cfcheck-save-baseline) to keep the fix" if strict else "")
            )
            # reported as XPASS (strict: a failure); a later failure in the test stays a failure
            self.node.add_marker(pytest.mark.xfail(reason=reason, strict=strict, raises=_NeverRaised))

    def unavailable(self, metric: str | MetricKey, reason: str) -> ScoreRecord:
        """Record that ``metric`` could not be computed (verdict "error") and fail the test; a key
        without a card is refused as :meth:`__call__` refuses it."""
        __tracebackhide__ = True
        self.card(metric)
        record = self.error(metric, reason)
        if record.baseline_status is not None and record.baseline is not None:
            reason += f" (the baseline had {record.baseline:.4g})"
        pytest.fail(f"{metric} on {record.task}: cannot be computed: {reason}", pytrace=False)

    def error(self, metric: str | MetricKey, reason: str) -> ScoreRecord:
        """Record that ``metric`` could not be computed (verdict "error"), without failing; a
        name without a card (a test named after its check, a domain that does not load) is recorded
        with no direction."""
        key = MetricKey.parse(metric)
        card = CARDS.get(key.card)
        bar = self.bar(key)[1] if card is not None else None
        record = self._record(
            card,
            str(key),
            value=math.nan,
            n=0,
            ci=(math.nan, math.nan),
            bar=RecordedBar.of(bar) if bar else None,
            verdict="error",
            reason=reason,
        )
        if self.session.baseline is not None:  # could not be computed: it fails the run, baseline or not
            stored = self.session.baseline.entry(record.key, record.legacy_key)
            record.baseline = stored.value if stored is not None else None
            record.baseline_status = baseline_status.ERROR
        self._publish(record)
        return record

    # -- helpers ------------------------------------------------------------------------------
    def _record(
        self,
        card: MetricCard | None,
        metric: str,
        *,
        value: float,
        n: int,
        ci: tuple[float, float],
        bar: RecordedBar | None,
        verdict: str | None,
        reason: str | None = None,
        samples: list[float] | None = None,
        labels: dict[str, list[Any]] | None = None,
        extra: dict[str, Any] | None = None,
        set_features: SetFeatures | None = None,
    ) -> ScoreRecord:
        """The record of a score of this test; ValueError where its identity cannot be written and read back
        (a task, suite or metric name :class:`~cfcheck.core.keys.ScoreId` refuses, named in the message)."""
        record = ScoreRecord(
            nodeid=self.node.nodeid,
            suite=self.suite,
            metric=metric,
            task=self.task_id,
            value=value,
            n=n,
            direction=card.direction if card is not None else "none",
            ci_low=ci[0],
            ci_high=ci[1],
            bar=bar,
            verdict=verdict,
            reason=reason,
            samples=samples or [],
            sample_labels=labels or {},
            extra=extra or {},
            set_features=set_features.encode() if set_features is not None else {},
            kind=self.kind,
            domain=self.domain,
        )
        record.id.serialise()  # raises here, in the test, rather than where the run's records are gathered
        return record

    def _publish(self, record: ScoreRecord) -> None:
        self.session.add_record(record)
        # one property per field: `--junitxml` reports (and CI dashboards) show the numbers
        prefix = f"cfcheck.{record.metric}"
        for name, value in (
            ("kind", record.kind),
            ("domain", record.domain),
            ("task", record.task),
            ("value", record.value),
            ("ci_low", record.ci_low),
            ("ci_high", record.ci_high),
            ("n", record.n),
            ("bar", record.threshold),
            ("verdict", record.verdict),
            ("reason", record.reason),
        ):
            if value is not None:
                self.node.user_properties.append((f"{prefix}.{name}", value))
