"""The calling contract, checked on a handful of inputs: what every kind's contract suite runs.

Shapes, dtypes, devices, ranges, NaN/Inf, the validity mask and non-mutation are checked on
every call during generation too; the contract suites make them visible as their own lines,
and add determinism: the same inputs and the same seeded generator give the same outputs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from cfcheck.kinds import kind_spec
from cfcheck.kinds.base import Inputs, slice_arguments
from cfcheck.kinds.calling import MethodOutput, MethodOutputError


def contract_inputs(session: Any, kind: str) -> tuple[Any, Inputs]:
    """A small, fixed batch of the first task of ``kind`` on its first selected domain."""
    spec = kind_spec(kind)
    domains, reason = session.domains_for(kind)
    if not domains:
        pytest.skip(reason or f"no domain has suites for {kind} methods")

    def build() -> tuple[Any, Inputs]:
        task = spec.tasks(session, domains[0], "explained")[0]
        inputs = spec.inputs(session, task)
        index = spec.contract_index(inputs, session.profile.determinism_batch)
        small = Inputs(
            like=inputs.like[index],
            arguments={k: slice_arguments(v, index, torch.device("cpu")) for k, v in inputs.arguments.items()},
            labels={k: v[index] for k, v in inputs.labels.items()},
        )
        return task, small

    return session.memo(("contract", kind), build)


def call_on_contract_inputs(session: Any, kind: str, method: Any, seed: int) -> MethodOutput:
    """One generation on the contract batch with a generator seeded by ``seed``; a contract
    violation fails the test with the method's fault."""
    __tracebackhide__ = True
    task, inputs = contract_inputs(session, kind)
    try:
        return kind_spec(kind).generate(session, dataclasses.replace(task, seed=seed), method, inputs, None)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)


def assert_deterministic(session: Any, kind: str, method: Any) -> None:
    """Two calls with the same seed must agree exactly."""
    __tracebackhide__ = True
    first = call_on_contract_inputs(session, kind, method, seed=1234)
    second = call_on_contract_inputs(session, kind, method, seed=1234)
    if not (torch.equal(first.values, second.values) and torch.equal(first.valid, second.valid)):
        difference = float((first.values - second.values).abs().max()) if first.values.shape == second.values.shape else float("nan")
        _, keyword = kind_spec(kind).call_and_rng
        pytest.fail(
            f"two calls with the same seed differ (max |difference| {difference:.3g}); draw all "
            f"randomness from the `{keyword}` argument cfcheck passes to the method",
            pytrace=False,
        )
