"""The one cfcheck session object of a pytest run (kept in ``config.stash``).

It owns everything that outlives a single test: the resolved options and profile, the method
under test, the selected domains and their reference models, the outputs generated per task
(in memory and in the persistent cache), the score records and the baseline; and it writes the
scorecard at the end. It knows no kind and no domain: those answer through
:class:`cfcheck.kinds.base.KindSpec` and :class:`cfcheck.domains.base.Domain`.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from cfcheck.adapter import MethodSpec
from cfcheck.baseline import Baseline
from cfcheck.cache import GenerationCache, method_fingerprint, tensor_digest
from cfcheck.domains import Domain, available_domains, get_domain
from cfcheck.io import atomic_write_text
from cfcheck.kinds import MethodKind, kind_spec
from cfcheck.kinds.base import Task
from cfcheck.kinds.calling import MethodOutput, MethodOutputError
from cfcheck.profiles import Profile
from cfcheck.records import ScoreRecord
from cfcheck.scorecard import build_scorecard, write_scorecard
from cfcheck.zoo import ModelZoo


class CfcheckSession:
    def __init__(
        self,
        *,
        method: MethodSpec,
        profile: Profile,
        device: torch.device,
        seed: int,
        report_dir: Path,
        baseline: Baseline | None,
        save_baseline: Path | None,
        domains: tuple[str, ...] | None = None,
        cache: GenerationCache | None = None,
    ) -> None:
        self.method = method
        self.profile = profile
        self.device = device
        self.seed = seed
        self.report_dir = report_dir
        self.baseline = baseline
        self.save_baseline = save_baseline
        self.requested_domains = domains
        self.cache = cache if cache is not None else GenerationCache(None)
        self.records: list[ScoreRecord] = []
        self.outcomes: Counter[str] = Counter()
        self.started = datetime.now(timezone.utc)
        self.scorecard_path: Path | None = None
        #: the method's calls per task kind (cache hits call it zero times)
        self.method_calls: Counter[str] = Counter()
        self._results: dict[Task, Any] = {}
        self._zoos: dict[str, ModelZoo] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        self.deselected: str | None = None  # why suites of other kinds were deselected

    # -- domains, models and per-run memos (the kinds' view of the run: cfcheck.kinds.base.Run) --
    def domain(self, name: str) -> Domain:
        return get_domain(name)

    def domains_for(self, kind: MethodKind | str) -> tuple[list[str], str | None]:
        """The selected domains that have suites for ``kind``, and why there are none if so."""
        spec = kind_spec(kind)
        names = self.requested_domains or available_domains()
        chosen, reasons = [], []
        for name in names:
            reason = spec.supports(self.domain(name))
            if reason is None:
                chosen.append(name)
            else:
                reasons.append(reason)
        return chosen, ("; ".join(reasons) or None) if not chosen else None

    def check_profile(self) -> None:
        """ValueError when the profile asks a selected domain for something it lacks."""
        for kind in MethodKind:
            for domain in self.domains_for(kind)[0]:
                kind_spec(kind).check(self, domain)

    def zoo(self, domain: str) -> ModelZoo:
        if domain not in self._zoos:
            self._zoos[domain] = ModelZoo(domain, self.device)
        return self._zoos[domain]

    def memo(self, key: tuple[Any, ...], factory: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    @property
    def seeds(self) -> tuple[int, ...]:
        return self.profile.task_seeds(self.seed)

    # -- outputs, generated once per task --------------------------------------------------
    def outputs(
        self,
        task: Task,
        method: Any,
        progress: Callable[[str], None] | None = None,
        *,
        requester: str | None = None,
    ) -> Any:
        """The kind's result object for ``task``: generated on first use (or read from the
        persistent cache), then kept for the session.

        A method fault is kept too and raised as :class:`MethodOutputError`: in full for the
        first test that asks (``requester``, its node id), as a one-line pointer to that test's
        report for every later one.
        """
        __tracebackhide__ = True
        spec = kind_spec(task.kind)
        if task not in self._results:
            inputs = self.memo(("inputs", task), lambda: spec.inputs(self, task))
            write = (lambda text: progress(f"{task.id}: {text}")) if progress else None
            started = time.monotonic()
            try:
                output = self._cached_generation(spec, task, method, inputs, write)
                self._results[task] = spec.result(self, task, inputs, output, time.monotonic() - started)
            except MethodOutputError as error:
                self._results[task] = error
        result = self._results[task]
        if isinstance(result, MethodOutputError):
            raise result.for_task(task.id, requester, noun=spec.output_noun)
        return result

    def _cached_generation(self, spec: Any, task: Task, method: Any, inputs: Any, write: Any) -> MethodOutput:
        __tracebackhide__ = True
        key = self.cache.key(
            method=self.method.spec,
            code=method_fingerprint(method, self.method.module),
            domain=task.domain,
            task=json.dumps(task.identity(), sort_keys=True),
            inputs=tensor_digest(*inputs.tensors()),
            profile_batch=self.profile.batch_size,
            device=self.device.type,
        )
        stored = self.cache.load(key)
        if stored is not None and set(stored) == {"values", "valid"}:
            if write is not None:
                write("read from the generation cache")
            return MethodOutput(stored["values"], stored["valid"])
        self.method_calls[task.kind] += 1
        output = spec.generate(self, task, method, inputs, write)
        self.cache.store(key, {"values": output.values, "valid": output.valid}, {"task": f"{task.kind}/{task.domain}/{task.id}"})
        return output

    # -- records and the scorecard ---------------------------------------------------------
    def add_record(self, record: ScoreRecord) -> None:
        self.records.append(record)

    def merge_records(self, serialized: str) -> None:
        """Records sent by a pytest-xdist worker (JSON list)."""
        self.records.extend(ScoreRecord.from_dict(d) for d in json.loads(serialized))

    def serialize_records(self) -> str:
        return json.dumps([r.to_dict() for r in self.records])

    def profile_summary(self) -> dict[str, Any]:
        return {
            "name": self.profile.name,
            "seeds": self.profile.seeds,
            "bootstrap_resamples": self.profile.bootstrap_resamples,
            "timeout": self.profile.timeout,
            "sections": self.profile.describe_sections(),
            "thresholds": {k: t.describe() for k, t in sorted(self.profile.thresholds.items())},
            "domains": {name: self._domain_facts(name) for name in sorted({r.domain for r in self.records} - {"-"})},
        }

    def _domain_facts(self, name: str) -> dict[str, Any]:
        """What a domain's kinds want the scorecard to say about it (e.g. the ideal pairs);
        a broken model install must not stop the write."""
        facts: dict[str, Any] = {}
        for kind in {r.kind for r in self.records if r.domain == name}:
            try:
                facts.update(kind_spec(kind).provenance(self, name))
            except Exception:  # reported by the tests that needed the models
                continue
        return facts

    def write_scorecard(self, complete: bool) -> Path:
        models: dict[str, str] = {}
        for domain in sorted({r.domain for r in self.records} - {"-"}) or list(self._zoos):
            try:
                models.update(self.zoo(domain).hashes())
            except Exception:  # an unknown domain name in a record must not stop the write
                continue
        scorecard = build_scorecard(
            self.records,
            method=self.method.spec,
            profile=self.profile_summary(),
            status="complete" if complete else "incomplete",
            seeds=self.seeds,
            device=str(self.device),
            models=models,
            outcomes=dict(self.outcomes),
            started=self.started,
            cache=self.cache.stats.describe() if self.cache.directory is not None else "off",
        )
        directory = self.report_dir / f"{self.method.name}-{self.profile.name}"
        self.scorecard_path = write_scorecard(directory, scorecard, self.records)
        if self.save_baseline is not None and complete and self.outcomes.get("failed", 0) == 0:
            self.save_baseline.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.save_baseline, self.scorecard_path.read_text())
        return self.scorecard_path
