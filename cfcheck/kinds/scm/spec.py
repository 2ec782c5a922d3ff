"""SCM counterfactual generators: ``counterfactual(x, parents, intervention) -> x_cf``.

Tasks are (domain, intervened factor, seed): ``n_inputs`` scored images with their observed
parents (a dict of N-tensors keyed by the domain's factor names) and one intervention, a dict
with one factor and the N new values, each in another bin than the observed value (10 bins for
a continuous factor, as Melistas et al. 2024). The domain's true counterfactual of every input
is computed where the domain can (capability ``intervention_counterfactual``); a user's domain of
real images has none (:func:`truth_missing` says why, and the ground-truth scores are skipped with it),
but propagates every intervention through its attribute mechanisms (``counterfactual_parents``),
which is what effectiveness, causal-graph compliance and realism compare against.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from cfcheck.core.answer_reads import engine_reads
from cfcheck.core.seeds import TASK_INPUTS, seeded
from cfcheck.domains.base import INTERVENTION_COUNTERFACTUAL, PARENT_RESAMPLING, Domain, MissingCapability
from cfcheck.kinds.base import EvaluatedOnce, Inputs, KindSpec, Run, Task
from cfcheck.kinds.calling import MethodOutput, OutputSpec
from cfcheck.kinds.scm.capabilities import CounterfactualParents, StructuralCausalModel
from cfcheck.kinds.scm.declaration import DECLARATION
from cfcheck.kinds.scm.section import SECTION_DEFAULTS

if TYPE_CHECKING:
    import pytest

#: offset of the SCM tasks' input draws from the seed (other kinds use other offsets)
SEED_OFFSET = 3


def scm(domain: Domain) -> StructuralCausalModel:
    """``domain`` as the structural causal model the SCM kind needs (:meth:`SCMSpec.supports`
    keeps other domains from the SCM suites)."""
    if not isinstance(domain, StructuralCausalModel):
        raise TypeError(f"domain {domain.name!r} has no structural causal model to intervene on")
    return domain


def truth_missing(domain: Domain) -> str | None:
    """Why ``domain`` has no true counterfactual (None: it computes one): the reason its
    ``intervention_counterfactual`` gives (a user's domain: "real data has no true counterfactual")."""
    if INTERVENTION_COUNTERFACTUAL in domain.capabilities:
        return None
    try:
        with engine_reads():  # an empty request: only whether the domain refuses is read
            scm(domain).intervention_counterfactual(domain.split_roles["scored"], torch.zeros(0, dtype=torch.long), {})
    except MissingCapability as error:
        return str(error)
    except Exception:  # noqa: BLE001 - any other refusal: the capability is what it lacks
        pass
    return f"domain {domain.name!r} cannot compute the true counterfactual (capability {INTERVENTION_COUNTERFACTUAL})"


@dataclass(frozen=True, kw_only=True)
class SCMTask(Task):
    kind: ClassVar[str] = "scm"
    factor: str  # the intervened parent

    @property
    def id(self) -> str:
        return f"do_{self.factor}/seed{self.seed}"


@dataclass
class SCMResult(EvaluatedOnce):
    """The counterfactuals of one SCM task, and the true counterfactuals of its inputs."""

    task: SCMTask
    inputs: Inputs
    output: MethodOutput
    domain: Domain
    index: torch.Tensor  # positions of the inputs in the scored split
    seconds: float
    _true: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)

    @property
    def x(self) -> torch.Tensor:
        return self.inputs.tensor("x")

    @property
    def parents(self) -> dict[str, torch.Tensor]:
        parents: dict[str, torch.Tensor] = self.inputs.arguments["parents"]
        return parents

    @property
    def intervention(self) -> dict[str, torch.Tensor]:
        intervention: dict[str, torch.Tensor] = self.inputs.arguments["intervention"]
        return intervention

    @property
    def x_cf(self) -> torch.Tensor:
        return self.output.values[:, 0]

    @property
    def valid(self) -> torch.Tensor:
        return self.output.valid

    @cached_property
    def true_cf(self) -> torch.Tensor | None:
        """The domain's true counterfactual of every input under the task's intervention; None where
        the domain cannot compute it (:func:`truth_missing` says why)."""
        if INTERVENTION_COUNTERFACTUAL not in self.domain.capabilities:
            return None
        with engine_reads():  # the engine's own use of the answer, not the method's
            return scm(self.domain).intervention_counterfactual(
                self.domain.split_roles["scored"], self.index, self.intervention
            )

    @cached_property
    def target_parents(self) -> dict[str, torch.Tensor]:
        """Every parent after the intervention, propagated by the domain's SCM: what an effective
        counterfactual shows (an intervention moves the intervened parent's children, for instance).

        Raises:
            MissingCapability: for a domain that cannot propagate an intervention (no ``counterfactual_parents``).
        """
        if not isinstance(self.domain, CounterfactualParents):
            raise MissingCapability(
                f"domain {self.domain.name!r} cannot propagate an intervention to the other parents "
                "(it has no counterfactual_parents)"
            )
        propagating = self.domain
        with engine_reads():
            return propagating.counterfactual_parents(self.domain.split_roles["scored"], self.index, self.intervention)

    @cached_property
    def sample_labels(self) -> dict[str, list[Any]]:
        labels = {name: values.tolist() for name, values in self.inputs.labels.items()}
        return {"input": list(range(len(self.inputs))), **labels}


class SCMSpec(KindSpec[SCMTask, SCMResult]):
    declaration = DECLARATION
    task_group_label = "intervention"
    output_noun = "counterfactuals"
    output = OutputSpec(call=DECLARATION.call, value_range=(0.0, 1.0))
    section_defaults = SECTION_DEFAULTS

    def parametrize(self, metafunc: pytest.Metafunc, run: Run, domains: list[Domain]) -> None:
        """Tasks, and per task the parents a test scores: ``@pytest.mark.cfcheck_parents("intervened")``
        gives each task's intervened parent, ``("others")`` every other parent."""
        if "cfcheck_parent" not in metafunc.fixturenames or "cfcheck_task" not in metafunc.fixturenames:
            return super().parametrize(metafunc, run, domains)
        import pytest

        from cfcheck.kinds.base import task_param

        marker = metafunc.definition.get_closest_marker("cfcheck_parents")
        which = marker.args[0] if marker else "intervened"
        if which not in ("intervened", "others"):
            raise ValueError(f"cfcheck_parents({which!r}): expected 'intervened' or 'others'")
        params = []
        for domain in domains:
            factors = domain.factor_names
            for task in self.tasks(run, domain, "explained"):
                param = task_param(task, len(domains) > 1)
                chosen = [task.factor] if which == "intervened" else [f for f in factors if f != task.factor]
                params += [pytest.param(task, p, marks=param.marks, id=f"{param.id}-{p}") for p in chosen]
        metafunc.parametrize(["cfcheck_task", "cfcheck_parent"], params)
        return None

    def examples(self, run: Run, result: SCMResult, k: int) -> dict[str, torch.Tensor]:
        x = result.x[:k]
        x_cf = torch.where(result.valid[:k, None, None, None], result.x_cf[:k], x)
        columns = {"input": x, "counterfactual": x_cf, "difference": x_cf - x}
        if result.true_cf is not None:
            columns["true counterfactual"] = result.true_cf[:k]
        return columns

    def supports(self, domain: Domain) -> str | None:
        if not domain.factor_names or not isinstance(domain, StructuralCausalModel):
            return f"domain {domain.name!r} has no structural causal model to intervene on"
        return None

    def check(self, run: Run, domain: Domain) -> None:
        requested = run.profile.section("scm").interventions or ()
        factors = domain.factor_names
        unknown = sorted(set(requested) - set(factors))
        if unknown:
            raise ValueError(f"interventions has unknown factors {unknown}; {domain.name} has {', '.join(factors)}")

    def size_warnings(self, run: Run, domain: Domain) -> list[str]:
        """On a domain that cannot render (real, attribute-labelled images): whether the ``reference``
        split holds, for every task of the run, the real images realism matches with its
        counterfactuals (:func:`~cfcheck.kinds.scm.realism_matching.short_classes`, every input
        answered); one warning naming the tasks, the split, the images needed and held, and what to
        change. Only realism needs them: its scores are skipped with the reason, the rest is scored."""
        from cfcheck.kinds.scm.realism import matching_parent
        from cfcheck.kinds.scm.realism_matching import short_classes, shortfall_message

        if PARENT_RESAMPLING in domain.capabilities or not isinstance(domain, CounterfactualParents):
            return []
        match = matching_parent(domain)
        worst: dict[int, tuple[int, int]] = {}  # class → (most counterfactuals showing it in a task, held)
        tasks = []
        for task in self.tasks(run, domain, "explained"):
            index, inputs = self._drawn(run, task)
            with engine_reads():
                targets = domain.counterfactual_parents(
                    domain.split_roles["scored"], index, inputs.arguments["intervention"]
                )
            short = short_classes(domain, targets, match)
            tasks += [task.id] if short else []
            for k, n_k, p_k in short:
                worst[k] = max(worst.get(k, (0, p_k)), (n_k, p_k))
        message = shortfall_message(domain, [(k, n, p) for k, (n, p) in sorted(worst.items())], match)
        if message is None:
            return []
        return [
            f"{message}. Realism (scm_fid, scm_kid) is skipped on {len(tasks)} of the run's tasks at the "
            f"{run.profile.name} profile ({', '.join(tasks)}); the domain's other scores are computed"
        ]

    def tasks(self, run: Run, domain: Domain, which: str) -> list[SCMTask]:
        if which != "explained":
            raise ValueError(f"SCM suites have only 'explained' tasks, got cfcheck_tasks({which!r})")
        factors = run.profile.section("scm").interventions or domain.factor_names
        return [SCMTask(domain=domain, factor=f, seed=seed) for f in factors for seed in run.seeds]

    def _draw(self, run: Run, task: SCMTask) -> tuple[torch.Tensor, Inputs]:
        domain = task.domain
        scored_name = domain.split_roles["scored"]
        scored = domain.split(scored_name)
        n = min(run.profile.section("scm").n_inputs, len(scored.labels))
        position = domain.factor_names.index(task.factor)
        generator = torch.Generator().manual_seed(seeded(task.seed, TASK_INPUTS, SEED_OFFSET, position))
        index = torch.randperm(len(scored.labels), generator=generator)[:n].sort().values
        with engine_reads():  # the task's parents, which the call hands the method
            parents = scm(domain).parents(scored_name, index)
        new = scm(domain).sample_intervention(task.factor, parents, generator)
        inputs = Inputs(
            like=scored.images[index],
            arguments={"x": scored.images[index].clone(), "parents": parents, "intervention": {task.factor: new}},
            labels={"observed": parents[task.factor], "intervened": new},
        )
        return index, inputs

    def _drawn(self, run: Run, task: SCMTask) -> tuple[torch.Tensor, Inputs]:
        """The task's draw (:meth:`_draw`), once per run."""
        drawn: tuple[torch.Tensor, Inputs] = run.memo(("scm-draw", task), lambda: self._draw(run, task))
        return drawn

    def inputs(self, run: Run, task: SCMTask) -> Inputs:
        return self._drawn(run, task)[1]

    def arguments(self, run: Run, task: SCMTask, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        return batch["x"], batch["parents"], batch["intervention"]

    def result(self, run: Run, task: SCMTask, inputs: Inputs, output: MethodOutput, seconds: float) -> SCMResult:
        index = run.memo(("scm-draw", task), lambda: self._draw(run, task))[0]
        return SCMResult(task, inputs, output, task.domain, index, seconds)


SPEC = SCMSpec()

__all__ = ["SPEC", "SCMResult", "SCMSpec", "SCMTask"]
