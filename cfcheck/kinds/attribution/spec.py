"""Feature attributions: ``attribute(x, model, target) -> saliency`` shaped like ``x``.

Tasks are (domain, model, seed): ``n_inputs`` scored images, each explained for the class the
model predicts on it. The random-model task explains the domain's random classifier for the
same inputs and the trained counterpart's targets, and declares that it needs the trained
task (Adebayo et al.'s model-randomisation test compares the two maps) and the tasks of the
profile's other random draws (re-initialisations of the counterpart, explained for the same inputs
and targets: :mod:`cfcheck.kinds.attribution.randomisation`). Each stage of the counterpart's
cascading randomisation (its layers re-initialised from the output layer down, stage names
``<model>~<layer>``) has a task that needs the trained task only: the cascade is one draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import torch

from cfcheck.core.seeds import TASK_INPUTS, seeded
from cfcheck.domains.base import Domain
from cfcheck.kinds.attribution.declaration import DECLARATION
from cfcheck.kinds.attribution.randomisation import draw_models
from cfcheck.kinds.attribution.section import SECTION_DEFAULTS
from cfcheck.kinds.base import Inputs, KindSpec, Run, Task
from cfcheck.kinds.calling import MethodOutput, OutputSpec

#: offset of the attribution tasks' input draws from the seed (other kinds use other offsets)
SEED_OFFSET = 5


@dataclass(frozen=True, kw_only=True)
class AttributionTask(Task):
    kind: ClassVar[str] = "attribution"
    model: str
    #: which inputs: "scored" (``n_inputs`` scored inputs), or the removal benchmarks'
    #: "removal_train" (training inputs to retrain on) and "removal_test" (scored inputs)
    inputs_from: str = "scored"

    @property
    def id(self) -> str:
        suffix = {"scored": "", "removal_train": "/removal-train", "removal_test": "/removal"}[self.inputs_from]
        return f"{self.model}/seed{self.seed}{suffix}"


@dataclass
class AttributionResult:
    task: AttributionTask
    inputs: Inputs
    output: MethodOutput
    seconds: float

    @property
    def x(self) -> torch.Tensor:
        return self.inputs.tensor("x")

    @property
    def target(self) -> torch.Tensor:
        return self.inputs.tensor("target")

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


class AttributionSpec(KindSpec[AttributionTask, AttributionResult]):
    declaration = DECLARATION
    task_group_label = "model"
    output_noun = "saliency maps"
    output = OutputSpec(call=DECLARATION.call, value_range=None)
    section_defaults = SECTION_DEFAULTS

    def examples(self, run: Run, result: AttributionResult, k: int) -> dict[str, torch.Tensor]:
        return {"input": result.x[:k], "saliency": result.saliency[:k]}

    def supports(self, domain: Domain) -> str | None:
        if not domain.model_roles.get("explained"):
            return f"domain {domain.name!r} has no models to attribute"
        return None

    def check(self, run: Run, domain: Domain) -> None:
        requested = run.profile.section("attribution").models or ()
        known = {m for name in run.domain_names() for m in run.domain(name).model_roles.get("explained", ())}
        unknown = sorted(set(requested) - known)
        if unknown:
            raise ValueError(f"models has unknown entries {unknown}; the run's domains have {', '.join(sorted(known))}")

    def _models(self, run: Run, domain: Domain) -> tuple[str, ...]:
        """The section's models that ``domain`` has, or all its explained models if it has none of them."""
        explained = tuple(domain.model_roles["explained"])
        requested = run.profile.section("attribution").models or ()
        return tuple(m for m in requested if m in explained) or explained

    def tasks(self, run: Run, domain: Domain, which: str) -> list[AttributionTask]:
        models = self._models(run, domain)
        if which == "explained":
            return [AttributionTask(domain=domain, model=m, seed=s) for m in models for s in run.seeds]
        if which == "removal":
            # the scored inputs' task needs the training inputs' (both feed every removal curve)
            return [
                AttributionTask(
                    domain=domain,
                    model=m,
                    seed=s,
                    inputs_from="removal_test",
                    needs=(AttributionTask(domain=domain, model=m, seed=s, inputs_from="removal_train"),),
                )
                for m in models
                for s in run.seeds
            ]
        if which not in ("random", "cascade"):
            raise ValueError(
                "attribution suites have 'explained', 'random', 'cascade' and 'removal' tasks, "
                f"got cfcheck_tasks({which!r})"
            )
        counterparts = domain.model_roles.get("randomisation_counterpart")
        if not counterparts or (which == "random" and not domain.model_roles.get("random")):
            return []  # the suites skip: the domain declares no trained counterpart (or random classifier)
        counterpart = counterparts[0]

        def needs(model: str, seed: int) -> tuple[AttributionTask, ...]:
            """The trained counterpart's task, then (a random classifier's task) its other random draws."""
            trained = AttributionTask(domain=domain, model=counterpart, seed=seed)
            if which == "cascade":
                return (trained,)
            others = draw_models(model, counterpart, seed, run.profile.section("attribution").randomisation_draws)[1:]
            return (
                trained,
                *(AttributionTask(domain=domain, model=name, seed=seed, needs=(trained,)) for name in others),
            )

        # "cascade": the counterpart with its layers re-initialised from the top down, one stage per layer
        randomised = (
            domain.model_roles["random"] if which == "random" else run.zoo(domain).randomisation_stages(counterpart)
        )
        return [
            AttributionTask(domain=domain, model=name, seed=s, needs=needs(name, s))
            for name in randomised
            for s in run.seeds
        ]

    def inputs(self, run: Run, task: AttributionTask) -> Inputs:
        domain = task.domain
        section = run.profile.section("attribution")
        split_role, n, offset = {
            "scored": ("scored", section.n_inputs, SEED_OFFSET),
            "removal_train": ("train", section.removal_train, SEED_OFFSET + 1),
            "removal_test": ("scored", section.removal_test, SEED_OFFSET + 2),
        }[task.inputs_from]
        data = domain.split(domain.split_roles[split_role])
        n = min(n, len(data.labels))
        generator = torch.Generator().manual_seed(seeded(task.seed, TASK_INPUTS, offset))
        index = torch.randperm(len(data.labels), generator=generator)[:n].sort().values
        x = data.images[index].clone()
        # explained for the class the (trained) model predicts: the random task uses its counterpart's
        decider = task.model
        if task.needs and task.inputs_from == "scored":
            needed = task.needs[0]
            if not isinstance(needed, AttributionTask):
                raise TypeError(f"task {task.id} needs {needed!r}, not an attribution task")
            decider = needed.model
        target = run.zoo(task.domain).logits(decider, x).argmax(1)
        return Inputs(
            like=x, arguments={"x": x, "target": target}, labels={"label": data.labels[index], "target": target}
        )

    def arguments(self, run: Run, task: AttributionTask, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        return batch["x"], run.zoo(task.domain)[task.model], batch["target"]

    def result(
        self, run: Run, task: AttributionTask, inputs: Inputs, output: MethodOutput, seconds: float
    ) -> AttributionResult:
        return AttributionResult(task, inputs, output, seconds)


SPEC = AttributionSpec()

__all__ = ["SPEC", "AttributionResult", "AttributionSpec", "AttributionTask"]
