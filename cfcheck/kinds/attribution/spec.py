"""Feature attributions: ``attribute(x, model, target) -> saliency`` shaped like ``x``.

Tasks are (domain, model, seed): ``n_inputs`` scored images, each explained for the class the
model predicts on it. The random-model task explains the domain's random classifier for the
same inputs and the trained counterpart's targets, and declares that it needs the trained
task (Adebayo et al.'s model-randomisation test compares the two maps).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import torch

from cfcheck.domains.base import Domain
from cfcheck.kinds.base import Inputs, KindSpec, Run, Task
from cfcheck.kinds.calling import MethodOutput, OutputSpec
from cfcheck.kinds.protocols import MethodKind
from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

#: offset of the attribution tasks' input draws from the seed (other kinds use other offsets)
SEED_OFFSET = 5




@dataclass(frozen=True, kw_only=True)
class AttributionTask(Task):
    kind: ClassVar[str] = "attribution"
    model: str

    @property
    def id(self) -> str:
        return f"{self.model}/seed{self.seed}"


@dataclass
class AttributionResult:
    task: AttributionTask
    inputs: Inputs
    output: MethodOutput
    seconds: float

    @property
    def x(self) -> torch.Tensor:
        return self.inputs.arguments["x"]

    @property
    def target(self) -> torch.Tensor:
        return self.inputs.arguments["target"]

    @property
    def saliency(self) -> torch.Tensor:
        return self.output.values[:, 0]

    @property
    def valid(self) -> torch.Tensor:
        return self.output.valid

    @cached_property
    def sample_labels(self) -> dict[str, list[Any]]:
        labels = {name: values.tolist() for name, values in self.inputs.labels.items()}
        return {"input": list(range(len(self.inputs))), **labels}


class AttributionSpec(KindSpec):
    kind: ClassVar[MethodKind] = MethodKind.ATTRIBUTION
    task_group_label = "model"
    output_noun = "saliency maps"
    output = OutputSpec(call="attribute", value_range=None)
    section_defaults = SECTION_DEFAULTS
    pending_suites = {
        "roar": "remove-and-retrain accuracy curves: the removal issue (#10)",
        "road": "noisy-linear-imputation removal curves: the removal issue (#10)",
        "goar": "geometric removal with diffusion projection: the removal issue (#10)",
    }

    def examples(self, run: Run, result: AttributionResult, k: int) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return {"input": result.x[:k], "saliency": result.saliency[:k]}

    def supports(self, domain: Domain) -> str | None:
        if not domain.model_roles.get("explained"):
            return f"domain {domain.name!r} has no models to attribute"
        return None

    def check(self, run: Run, domain: str) -> None:
        requested = run.profile.section("attribution").models or ()
        explained = run.domain(domain).model_roles["explained"]
        unknown = sorted(set(requested) - set(explained))
        if unknown:
            raise ValueError(f"models has unknown entries {unknown}; {domain} has {', '.join(explained)}")

    def tasks(self, run: Run, domain: str, which: str) -> list[AttributionTask]:  # type: ignore[override]
        dom = run.domain(domain)
        models = run.profile.section("attribution").models or dom.model_roles["explained"]
        trained = [AttributionTask(domain=domain, model=m, seed=s) for m in models for s in run.seeds]
        if which == "explained":
            return trained
        if which != "random":
            raise ValueError(f"attribution suites have 'explained' and 'random' tasks, got cfcheck_tasks({which!r})")
        counterpart = dom.model_roles["randomisation_counterpart"][0]
        return [
            AttributionTask(domain=domain, model=random, seed=s,
                            needs=(AttributionTask(domain=domain, model=counterpart, seed=s),))
            for random in dom.model_roles["random"]
            for s in run.seeds
        ]

    def inputs(self, run: Run, task: AttributionTask) -> Inputs:  # type: ignore[override]
        domain = run.domain(task.domain)
        scored = domain.split(domain.split_roles["scored"])
        n = min(run.profile.section("attribution").n_inputs, len(scored.labels))
        generator = torch.Generator().manual_seed(10_007 * task.seed + SEED_OFFSET)
        index = torch.randperm(len(scored.labels), generator=generator)[:n].sort().values
        x = scored.images[index].clone()
        # explained for the class the (trained) model predicts: the random task uses its counterpart's
        decider = task.needs[0].model if task.needs else task.model
        target = run.zoo(task.domain).logits(decider, x).argmax(1)
        return Inputs(like=x, arguments={"x": x, "target": target}, labels={"label": scored.labels[index], "target": target})

    def arguments(self, run: Run, task: AttributionTask, batch: Mapping[str, Any]) -> tuple[Any, ...]:  # type: ignore[override]
        return batch["x"], run.zoo(task.domain)[task.model], batch["target"]

    def result(self, run: Run, task: AttributionTask, inputs: Inputs, output: MethodOutput, seconds: float) -> AttributionResult:  # type: ignore[override]
        return AttributionResult(task, inputs, output, seconds)


SPEC = AttributionSpec()

__all__ = ["SPEC", "AttributionResult", "AttributionSpec", "AttributionTask"]
