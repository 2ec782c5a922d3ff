"""The one cfcheck session object of a pytest run (kept in ``config.stash``).

It owns everything that outlives a single test: the resolved options and profile, the method
under test, the reference models, the cache of generated counterfactuals, the score records
and the baseline; and it writes the scorecard at the end.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from cfcheck.adapter import MethodSpec
from cfcheck.baseline import Baseline
from cfcheck.generation import MethodOutputError, VCEResult, generate
from cfcheck.profiles import Profile
from cfcheck.records import ScoreRecord
from cfcheck.scorecard import atomic_write, build_scorecard, write_scorecard
from cfcheck.tasks import TaskInputs, VCETask, ideal_targets, select_inputs
from cfcheck.zoo import ModelZoo

DOMAIN = "morpho"
#: The split whose committee confusions define the ideal pairs: never scored, so the pairs do
#: not depend on the images they are scored on.
CONFUSION_SPLIT = "val"
#: Real images that fix the standardisation of embedding features.
FEATURE_REFERENCE_SPLIT = "val"
#: Real images for realism references and real-vs-real floors (never trained on, never scored).
REALISM_REFERENCE_SPLIT = "reference"


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
    ) -> None:
        self.method = method
        self.profile = profile
        self.device = device
        self.seed = seed
        self.report_dir = report_dir
        self.baseline = baseline
        self.save_baseline = save_baseline
        self.records: list[ScoreRecord] = []
        self.outcomes: Counter[str] = Counter()
        self.started = datetime.now(timezone.utc)
        self.scorecard_path: Path | None = None
        self._results: dict[VCETask, VCEResult | MethodOutputError] = {}
        self._inputs: dict[tuple[str, int], TaskInputs] = {}

    # -- reference data and models ---------------------------------------------------------
    @cached_property
    def domain(self) -> Any:
        from cfcheck.domains import get_domain

        return get_domain(DOMAIN)

    @cached_property
    def zoo(self) -> ModelZoo:
        return ModelZoo(DOMAIN, self.device)

    @cached_property
    def ideal_targets(self) -> dict[int, int]:
        data = self.domain.split(CONFUSION_SPLIT)
        probs = torch.stack([self.zoo.logits(o, data.images).softmax(1) for o in self.zoo.oracles]).mean(0)
        return ideal_targets(probs, data.labels, self.domain.num_classes)

    @cached_property
    def _feature_statistics(self) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.zoo.features(self.domain.split(FEATURE_REFERENCE_SPLIT).images)
        return features.mean(0), features.std(0).clamp_min(1e-8)

    @cached_property
    def realism_pool(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Standardised embedding features and classes of the realism reference split."""
        data = self.domain.split(REALISM_REFERENCE_SPLIT)
        return self.embed(data.images), data.labels

    def embed(self, images: torch.Tensor) -> torch.Tensor:
        """Domain-embedding features standardised with fixed statistics of real data.

        One fixed normalisation (Hvilshøj et al.) keeps FID/KID comparable across runs and
        puts every dimension on the same scale, which KID's polynomial kernel needs.
        """
        mean, std = self._feature_statistics
        return (self.zoo.features(images) - mean) / std

    @property
    def seeds(self) -> tuple[int, ...]:
        return self.profile.task_seeds(self.seed)

    def tasks(self, classifiers: tuple[str, ...]) -> list[VCETask]:
        return [
            VCETask(classifier, pair_set, seed)
            for classifier in classifiers
            for pair_set in self.profile.pair_sets
            for seed in self.seeds
        ]

    def inputs(self, pair_set: str, seed: int) -> TaskInputs:
        key = (pair_set, seed)
        if key not in self._inputs:
            test = self.domain.split("test")
            self._inputs[key] = select_inputs(
                test.images,
                test.labels,
                pair_set=pair_set,
                seed=seed,
                n_per_source=self.profile.n_per_source,
                ideal=self.ideal_targets,
                num_classes=self.domain.num_classes,
            )
        return self._inputs[key]

    # -- counterfactuals, generated once per task ------------------------------------------
    def counterfactuals(
        self,
        task: VCETask,
        method: Any,
        progress: Callable[[str], None] | None = None,
        *,
        requester: str | None = None,
    ) -> VCEResult:
        """The method's counterfactuals for ``task``; generated on first use, then cached.

        A method fault is cached too and raised as :class:`MethodOutputError`: in full for the
        first test that asks (``requester``, its node id), as a one-line pointer to that test's
        report for every later one.
        """
        __tracebackhide__ = True
        if task not in self._results:
            inputs = self.inputs(task.pair_set, task.seed)
            started = time.monotonic()
            try:
                output = generate(
                    method,
                    inputs,
                    self.zoo[task.classifier],
                    device=self.device,
                    seed=task.seed,
                    batch_size=self.profile.batch_size,
                    progress=(lambda text: progress(f"{task.id}: {text}")) if progress else None,
                )
                self._results[task] = VCEResult(task, inputs, output, self.zoo, time.monotonic() - started)
            except MethodOutputError as error:
                self._results[task] = error
        result = self._results[task]
        if isinstance(result, MethodOutputError):
            raise result.for_task(task.id, requester)
        return result

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
            "n_per_source": self.profile.n_per_source,
            "seeds": self.profile.seeds,
            "classifiers": list(self.profile.classifiers),
            "pair_sets": list(self.profile.pair_sets),
            "bootstrap_resamples": self.profile.bootstrap_resamples,
            "thresholds": {k: t.describe() for k, t in sorted(self.profile.thresholds.items())},
            "ideal_targets": self._ideal_targets_or_none(),
        }

    def _ideal_targets_or_none(self) -> dict[str, int] | None:
        """The ideal pairs for the scorecard; a broken model install must not stop the write."""
        try:
            return {str(k): v for k, v in sorted(self.ideal_targets.items())}
        except Exception:  # reported by the tests that needed the models
            return None

    def write_scorecard(self, complete: bool) -> Path:
        scorecard = build_scorecard(
            self.records,
            method=self.method.spec,
            profile=self.profile_summary(),
            status="complete" if complete else "incomplete",
            seeds=self.seeds,
            device=str(self.device),
            models=self.zoo.hashes(),
            outcomes=dict(self.outcomes),
            started=self.started,
        )
        directory = self.report_dir / f"{self.method.name}-{self.profile.name}"
        self.scorecard_path = write_scorecard(directory, scorecard, self.records)
        if self.save_baseline is not None and complete and self.outcomes.get("failed", 0) == 0:
            self.save_baseline.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.save_baseline, self.scorecard_path.read_text())
        return self.scorecard_path
