"""The attribution kind's randomisation tasks: the random classifier's, and one per stage of the
trained counterpart's cascading randomisation, each needing the counterpart's task."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from cfcheck.kinds.attribution.section import AttributionSection
from cfcheck.kinds.attribution.spec import SPEC, AttributionTask


@dataclass
class _Domain:
    name: str = "faces"
    model_roles: dict = field(
        default_factory=lambda: {
            "explained": ("cnn", "mlp"),
            "random": ("random_cnn",),
            "randomisation_counterpart": ("cnn",),
        }
    )


class _Zoo:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def randomisation_stages(self, name: str) -> tuple[str, ...]:
        self.asked.append(name)
        return (f"{name}~head", f"{name}~body")


class _Run:
    def __init__(self, seeds=(0, 3)) -> None:
        self.seeds = seeds
        self.zoos: dict[str, _Zoo] = {}
        section = AttributionSection(n_inputs=4)
        self.profile = SimpleNamespace(section=lambda name: section)

    def zoo(self, domain) -> _Zoo:
        return self.zoos.setdefault(domain.name, _Zoo())


def test_cascade_tasks_are_the_counterparts_stages_top_first_each_needing_the_counterpart():
    run, domain = _Run(), _Domain()
    tasks = SPEC.tasks(run, domain, "cascade")
    assert [(t.model, t.seed) for t in tasks] == [("cnn~head", 0), ("cnn~head", 3), ("cnn~body", 0), ("cnn~body", 3)]
    assert run.zoos["faces"].asked == ["cnn"]
    for task in tasks:
        assert task.needs == (AttributionTask(domain=domain, model="cnn", seed=task.seed),)
        assert task.domain is domain and task.inputs_from == "scored"
    assert tasks[0].id == "cnn~head/seed0"
    # the random classifier's tasks need the counterpart's, then the tasks of the other random draws:
    # re-initialisations of the counterpart (seeds s·10007 + 1, …), each needing the counterpart's too
    random = SPEC.tasks(run, domain, "random")
    assert [(t.model, t.seed, t.needs[0].model) for t in random] == [("random_cnn", 0, "cnn"), ("random_cnn", 3, "cnn")]
    assert [t.model for t in random[0].needs[1:]] == ["cnn~reinit1", "cnn~reinit2", "cnn~reinit3", "cnn~reinit4"]
    assert [t.model for t in random[1].needs[1:]] == [f"cnn~reinit{3 * 10_007 + k}" for k in range(1, 5)]
    for task in random:
        trained = AttributionTask(domain=domain, model="cnn", seed=task.seed)
        assert all(
            draw.needs == (trained,) and draw.seed == task.seed and draw.group == task.group for draw in task.needs[1:]
        )
    assert len({t.model for task in random for t in task.needs[1:]}) == 8  # independent draws per seed
    assert run.zoos["faces"].asked == ["cnn"]  # naming the draws builds nothing


def test_the_profile_sets_how_many_random_draws_a_task_has():
    run = _Run(seeds=(0,))
    section = AttributionSection(n_inputs=4, randomisation_draws=1)
    run.profile = SimpleNamespace(section=lambda name: section)
    (task,) = SPEC.tasks(run, _Domain(), "random")
    assert [t.model for t in task.needs] == ["cnn"]  # one draw: the domain's random classifier only


def test_a_domain_without_a_counterpart_has_no_randomisation_tasks():
    run = _Run()
    no_counterpart = _Domain(model_roles={"explained": ("mlp",), "random": ("random_mlp",)})
    assert SPEC.tasks(run, no_counterpart, "cascade") == [] and SPEC.tasks(run, no_counterpart, "random") == []
    assert run.zoos == {}  # no cascade is built for it
    # a counterpart without a random classifier still has its cascade
    no_random = _Domain(model_roles={"explained": ("cnn",), "randomisation_counterpart": ("cnn",)})
    assert SPEC.tasks(run, no_random, "random") == []
    assert [t.model for t in SPEC.tasks(run, no_random, "cascade")] == ["cnn~head", "cnn~head", "cnn~body", "cnn~body"]


def test_an_unknown_task_group_names_the_known_ones():
    with pytest.raises(ValueError, match="'explained', 'random', 'cascade' and 'removal'"):
        SPEC.tasks(_Run(), _Domain(), "stages")
