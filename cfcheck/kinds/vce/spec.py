"""Visual counterfactual explainers: ``explain(x, target, classifier) -> x_cf``.

Tasks are (domain, explained classifier, pair set, seed): ``n_per_source`` scored images of
every class, sent to the class the oracle committee confuses them with most ("ideal") or to a
random other class ("other"). The random-classifier and cascading-randomisation tasks need the
trained counterpart's task on the same inputs, and declare it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.domains.base import Domain
from cfcheck.kinds.base import Inputs, KindSpec, Run, task_param
from cfcheck.kinds.calling import MethodOutput, OutputSpec
from cfcheck.kinds.vce.declaration import DECLARATION
from cfcheck.kinds.vce.result import VCEResult
from cfcheck.kinds.vce.section import SECTION_DEFAULTS
from cfcheck.kinds.vce.tasks import TaskInputs, TooFewInputs, VCETask, ideal_targets, select_inputs

if TYPE_CHECKING:
    import pytest

    from cfcheck.models.zoo import ModelZoo


def committee_ideal_targets(zoo: ModelZoo, domain: Domain) -> dict[int, int]:
    """Each class's most-confused other class, by the committee on the never-scored selection
    split (so the pairs do not depend on the images they are scored on)."""
    selection = domain.split_roles["selection"]
    probs = torch.stack([zoo.split_logits(o, selection).softmax(1) for o in zoo.oracles]).mean(0)
    return ideal_targets(probs, domain.split(selection).labels, domain.num_classes)


class VCEContext:
    """Per (run, domain): the ideal pairs and the scored inputs of every (pair set, seed)."""

    def __init__(self, run: Run, domain: Domain) -> None:
        self.run, self.domain = run, domain
        self._inputs: dict[tuple[str, int], TaskInputs] = {}

    @cached_property
    def ideal_targets(self) -> dict[int, int]:
        """Each class's ideal target ({} for a domain without an oracle committee)."""
        if not self.domain.model_roles.get("oracles"):
            return {}
        return committee_ideal_targets(self.run.zoo(self.domain), self.domain)

    def inputs(self, pair_set: str, seed: int) -> TaskInputs:
        key = (pair_set, seed)
        if key not in self._inputs:
            scored = self.domain.split(self.domain.split_roles["scored"])
            self._inputs[key] = self._select(scored, pair_set, seed)
        return self._inputs[key]

    def _select(self, scored: Any, pair_set: str, seed: int) -> TaskInputs:
        try:
            return select_inputs(
                scored.images,
                scored.labels,
                pair_set=pair_set,
                seed=seed,
                n_per_source=self.run.profile.section("vce").n_per_source,
                ideal=self.ideal_targets,
                num_classes=self.domain.num_classes,
            )
        except TooFewInputs as error:  # only a count is worth the advice; any other error says itself
            raise ValueError(
                f"domain {self.domain.name!r}, scored split: {error} (the profile's n_per_source); "
                "give the scored split more images or set a smaller n_per_source in "
                "[tool.cfcheck.vce]"
            ) from None


def unrelated_attributes(zoo: ModelZoo) -> list[str]:
    """The attributes with an oracle that a change of class must leave alone (all but the class's,
    the domain's ``class_attribute_oracle``)."""
    return sorted(a for a in zoo.attribute_oracles if a != zoo.class_attribute)


def _one_per_class(source: torch.Tensor) -> torch.Tensor:
    """The position of the first input of every class, in class order."""
    return torch.cat([torch.nonzero(source == c).flatten()[:1] for c in sorted(set(source.tolist()))])


def context(run: Run, domain: Domain) -> VCEContext:
    """The run's ideal pairs and scored inputs on ``domain`` (built once per run and domain)."""
    return run.memo(("vce", domain.name), lambda: VCEContext(run, domain))


class VCESpec(KindSpec[VCETask, VCEResult]):
    declaration = DECLARATION
    task_group_label = "classifier"
    output_noun = "counterfactuals"
    output = OutputSpec(call=DECLARATION.call, several=True, value_range=(0.0, 1.0))
    section_defaults = SECTION_DEFAULTS

    def supports(self, domain: Domain) -> str | None:
        if not domain.model_roles.get("explained"):
            return f"domain {domain.name!r} has no classifiers to explain"
        if len(domain.input_shape) != 3:
            return f"domain {domain.name!r} has {domain.input_shape}-shaped inputs: the VCE suites score C×H×W images"
        return None

    def check(self, run: Run, domain: Domain) -> None:
        requested = run.profile.section("vce").classifiers or ()
        explained = domain.model_roles["explained"]
        unknown = sorted(set(requested) - set(explained))
        if unknown:
            raise ValueError(
                f"classifiers has unknown entries {unknown}; {domain.name} explains {', '.join(explained)}"
            )

    def size_problems(self, run: Run, domain: Domain) -> list[str]:
        """The scored split must hold ``n_per_source`` images of every class; the realism pool
        (the ``reference`` split, with ``reference_extra`` where the domain has one) must hold, per
        class k, a reference set and the floor draws for the counterfactuals that target k, at every
        pair set and seed of the run (:func:`cfcheck.metrics.reference_sets.minimum_pool`)."""
        from cfcheck.metrics.reference_sets import FLOOR_DRAWS, minimum_pool

        section = run.profile.section("vce")
        where = f"domain {domain.name!r} at the {run.profile.name} profile"
        try:
            chosen = [context(run, domain).inputs(p, s) for p in self.pair_sets(run, domain) for s in run.seeds]
        except ValueError as error:  # the scored split is too small for n_per_source
            return [str(error)]
        roles = [role for role in ("reference", "reference_extra") if role in domain.split_roles]
        pool = torch.cat([domain.split(domain.split_roles[role]).labels for role in roles])
        held = pool.long().bincount(minlength=domain.num_classes)
        wanted = torch.stack([inputs.target.long().bincount(minlength=domain.num_classes) for inputs in chosen]).amax(0)
        short = [k for k in range(domain.num_classes) if int(held[k]) < minimum_pool(int(wanted[k]))]
        if not short:
            return []
        need = ", ".join(f"{domain.class_names[k]!r} {minimum_pool(int(wanted[k]))}" for k in short)
        have = ", ".join(f"{domain.class_names[k]!r} {int(held[k])}" for k in short)
        return [
            f"{where}: the realism scores need, per target class, a reference set and {FLOOR_DRAWS} floor draws "
            f"of real images ({FLOOR_DRAWS + 2} × the counterfactuals that target the class, with "
            f"{section.n_per_source} inputs per source class): {need} real images in the reference split, which "
            f"holds {have}; give the domain more images of those classes, a larger reference fraction "
            "(ImageDomain(fractions=...)), or fewer inputs ([tool.cfcheck.vce] n_per_source)"
        ]

    def provenance(self, run: Run, domain: Domain) -> dict[str, Any]:
        targets = context(run, domain).ideal_targets
        return {"ideal_targets": {str(k): v for k, v in sorted(targets.items())}}

    def contract_index(self, inputs: Inputs, k: int) -> torch.Tensor:
        """One input of every source class, so every target class is exercised."""
        return _one_per_class(inputs.labels["source"])[: max(k, 1) * 3]

    def examples(self, run: Run, result: VCEResult, k: int) -> dict[str, torch.Tensor]:
        """Input, counterfactual (an abstention shows the input), their difference and, where the
        domain can compute it, the true counterfactual under do(class = target)."""
        rows = _one_per_class(result.source)[:k]  # inputs come sorted by class: show several classes
        x = result.x[rows]
        x_cf = torch.where(result.valid[rows, None, None, None], result.x_cf[rows], x)
        columns = {"input": x, "counterfactual": x_cf, "difference": x_cf - x}
        if result.true_cf is not None:
            columns["true counterfactual"] = result.true_cf[rows]
        return columns

    def classifiers(self, run: Run, domain: Domain) -> tuple[str, ...]:
        chosen: tuple[str, ...] = run.profile.section("vce").classifiers or domain.model_roles["explained"]
        return chosen

    @staticmethod
    def pair_sets(run: Run, domain: Domain) -> tuple[str, ...]:
        """The profile's pair sets that ``domain`` can form: "ideal" pairs are the oracle committee's
        most-confused classes (a domain without oracles has none); "other" sends an input to a class
        other than its own and its ideal one, which needs a third class where there are oracles."""
        sets = run.profile.section("vce").pair_sets
        oracles = bool(domain.model_roles.get("oracles"))
        return tuple(
            p
            for p in sets
            if (p != "other" or domain.num_classes >= (3 if oracles else 2)) and (p != "ideal" or oracles)
        )

    def tasks(self, run: Run, domain: Domain, which: str) -> list[VCETask]:
        pair_sets = self.pair_sets(run, domain)
        base = [
            VCETask(domain=domain, classifier=classifier, pair_set=pair_set, seed=seed)
            for classifier in self.classifiers(run, domain)
            for pair_set in pair_sets
            for seed in run.seeds
        ]
        if which == "explained":
            return base
        if not domain.model_roles.get("random") or not domain.model_roles.get("randomisation_counterpart"):
            return []  # the suites skip: the domain declares no random classifier and counterpart
        counterpart = domain.model_roles["randomisation_counterpart"][0]
        if which == "random":
            randomised = domain.model_roles["random"]
        elif which == "cascade":
            randomised = run.zoo(domain).randomisation_stages(counterpart)
        else:
            raise ValueError(f"cfcheck_tasks({which!r}): expected 'explained', 'random' or 'cascade'")
        return [
            VCETask(
                domain=domain,
                classifier=name,
                pair_set=pair_set,
                seed=seed,
                needs=(VCETask(domain=domain, classifier=counterpart, pair_set=pair_set, seed=seed),),
            )
            for name in randomised
            for pair_set in pair_sets
            for seed in run.seeds
        ]

    def parametrize(self, metafunc: pytest.Metafunc, run: Run, domains: list[Domain]) -> None:
        """Tasks, and per task the oracle or unrelated attribute a test scores with."""
        names = [n for n in ("cfcheck_oracle", "cfcheck_attribute") if n in metafunc.fixturenames]
        if not names or "cfcheck_task" not in metafunc.fixturenames:
            return super().parametrize(metafunc, run, domains)
        marker = metafunc.definition.get_closest_marker("cfcheck_tasks")
        which = marker.args[0] if marker else "explained"
        import pytest

        params = []
        for domain in domains:
            zoo = run.zoo(domain)
            variants = zoo.oracles if names == ["cfcheck_oracle"] else unrelated_attributes(zoo)
            for task in self.tasks(run, domain, which):
                param = task_param(task, len(domains) > 1)
                params += [pytest.param(task, v, marks=param.marks, id=f"{param.id}-{v}") for v in variants]
        metafunc.parametrize(["cfcheck_task", names[0]], params)
        return None

    def inputs(self, run: Run, task: VCETask) -> Inputs:
        chosen = context(run, task.domain).inputs(task.pair_set, task.seed)
        return Inputs(
            like=chosen.x,
            arguments={"x": chosen.x, "target": chosen.target},
            labels={"source": chosen.source, "target": chosen.target},
        )

    def arguments(self, run: Run, task: VCETask, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        return batch["x"], batch["target"], run.zoo(task.domain)[task.classifier]

    def result(self, run: Run, task: VCETask, inputs: Inputs, output: MethodOutput, seconds: float) -> VCEResult:
        chosen = context(run, task.domain).inputs(task.pair_set, task.seed)
        return VCEResult(task, chosen, output, run.zoo(task.domain), seconds)


SPEC = VCESpec()

__all__ = ["SPEC", "VCEContext", "VCESpec", "context"]
