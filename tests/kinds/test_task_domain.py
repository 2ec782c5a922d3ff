"""A task carries its domain as the object, resolved once per run; names appear only where a
task meets text (ids, cache keys, records)."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from cfcheck.kinds.attribution.spec import AttributionTask
from cfcheck.kinds.base import task_param
from cfcheck.kinds.resources import RunResources
from cfcheck.kinds.vce.tasks import VCETask


@dataclasses.dataclass(eq=True)
class _UnhashableDomain:
    """A user's domain written as a plain dataclass: eq=True without frozen makes it unhashable."""

    name: str
    model_roles: dict = dataclasses.field(default_factory=dict)


def test_a_task_keeps_the_domain_object_and_is_named_hashed_and_keyed_by_its_name():
    faces = _UnhashableDomain("faces")
    with pytest.raises(TypeError):
        hash(faces)
    task = VCETask(domain=faces, classifier="cnn", pair_set="ideal", seed=1)
    assert task.domain is faces and task.domain_name == "faces"
    # hashable although its domain is not, and equal to the same task on an equal-named domain object
    assert {task: 1}[VCETask(domain=_UnhashableDomain("faces"), classifier="cnn", pair_set="ideal", seed=1)] == 1
    assert task != VCETask(domain=_UnhashableDomain("xrays"), classifier="cnn", pair_set="ideal", seed=1)
    # the cache key's task identity names the domain as before (a string), never the object
    identity = task.identity()
    assert identity == {"kind": "vce", "domain": "faces", "seed": 1, "classifier": "cnn", "pair_set": "ideal"}
    json.dumps(identity)
    assert task.group == "vce/faces/cnn/ideal/seed1"
    assert task_param(task, with_domain=True).id == "faces-cnn-ideal-seed1"
    # replace() keeps the domain and recomputes its name
    other = dataclasses.replace(task, domain=_UnhashableDomain("xrays"))
    assert other.domain_name == "xrays" and task.with_classifier("mlp").domain is faces


def test_a_task_refuses_a_domain_name_or_a_nameless_object():
    with pytest.raises(TypeError, match=r"must be a domain object.*run.domain"):
        VCETask(domain="morpho", classifier="cnn", pair_set="ideal", seed=0)
    with pytest.raises(TypeError, match="domain object"):
        AttributionTask(domain=object(), model="cnn", seed=0)


def test_the_run_builds_one_zoo_per_domain_name_and_refuses_a_name():
    class _Run(RunResources):
        def __init__(self) -> None:
            self.device, self._zoos, self._memo = torch.device("cpu"), {"faces": "the zoo"}, {}

    run = _Run()
    assert run.zoo(_UnhashableDomain("faces")) == "the zoo"
    with pytest.raises(TypeError, match=r"run.domain\('faces'\)"):
        run.zoo("faces")
