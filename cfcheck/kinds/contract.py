"""The calling contract, checked on a handful of inputs: what the one contract suite
(``suites/test_contract.py``) runs for every kind the method implements.

Shapes, dtypes, devices, ranges, NaN/Inf, the validity mask and non-mutation are checked on
every call during generation too; the contract suite makes them visible as their own lines,
and adds determinism: the same inputs and the same seeded generator give the same outputs.
What differs between kinds (the call, the RNG keyword, the output's shape and range, which
inputs to call on) comes from each kind's :class:`cfcheck.kinds.base.KindSpec`. Importing this
module does not import torch (the plugin parametrises the suite from it).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck.kinds.protocols import MethodKind

if TYPE_CHECKING:
    from cfcheck.kinds.base import Inputs, RunSession, Task
    from cfcheck.kinds.calling import MethodOutput

#: the fixture the contract suite takes its kind from (the plugin parametrises it over the kinds)
CONTRACT_FIXTURE = "cfcheck_contract_kind"


def parametrize_contract(
    metafunc: pytest.Metafunc, session: RunSession | None, marker: str, domain_fixture: str
) -> None:
    """Parametrise a contract test over every registered kind, each marked as its kind's suite
    (``marker``: the plugin deselects or skips the kinds the method does not implement) and, with a
    session, given the method built for the kind's first domain (``domain_fixture``), the one it
    draws inputs from. That fixture's parameter is None (pytest's key of the unparametrised
    fixture, so the method built for the default domain is shared) where the kind's first domain
    is the method's default one."""
    explicit: dict[MethodKind, Any] = {}
    if session is not None and domain_fixture in metafunc.fixturenames:
        default = session.default_method_domain()
        for kind in MethodKind:
            first = session.domains_for(kind)[0][:1]
            if first and first[0].name != default:
                explicit[kind] = first[0]
    params = []
    for kind in MethodKind:
        marks = [getattr(pytest.mark, marker)(kind.value)]
        if not explicit:
            params.append(pytest.param(kind, id=kind.value, marks=marks))
            continue
        domain = explicit.get(kind)
        label = kind.value if domain is None else f"{kind.value}-{domain.name}"
        params.append(pytest.param(kind, domain, id=label, marks=marks))
    if explicit:
        metafunc.parametrize([CONTRACT_FIXTURE, domain_fixture], params, indirect=[domain_fixture], scope="session")
    else:
        metafunc.parametrize(CONTRACT_FIXTURE, params)


def contract_inputs(session: RunSession, kind: MethodKind | str) -> tuple[Task, Inputs]:
    """A small, fixed batch of the first task of ``kind`` on its first selected domain."""
    import torch

    from cfcheck.kinds import kind_spec
    from cfcheck.kinds.base import Inputs, slice_arguments

    kind = MethodKind(kind)
    spec = kind_spec(kind)
    domains, reason = session.domains_for(kind)
    if not domains:
        pytest.skip(reason or f"no domain has suites for {kind.value} methods")

    def build() -> tuple[Task, Inputs]:
        task = spec.tasks(session, domains[0], "explained")[0]
        inputs = spec.inputs(session, task)
        index = spec.contract_index(inputs, session.profile.determinism_batch)
        small = Inputs(
            like=inputs.like[index],
            arguments={k: slice_arguments(v, index, torch.device("cpu")) for k, v in inputs.arguments.items()},
            labels={k: v[index] for k, v in inputs.labels.items()},
        )
        return task, small

    found: tuple[Task, Inputs] = session.memo(("contract", kind.value), build)
    return found


def call_on_contract_inputs(session: RunSession, kind: MethodKind | str, method: object, seed: int) -> MethodOutput:
    """One generation on the contract batch with a generator seeded by ``seed``; a contract
    violation fails the test with the method's fault."""
    __tracebackhide__ = True
    from cfcheck.kinds import kind_spec
    from cfcheck.kinds.calling import MethodOutputError

    task, inputs = contract_inputs(session, kind)
    try:
        return kind_spec(kind).generate(session, dataclasses.replace(task, seed=seed), method, inputs, None)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)


def assert_deterministic(session: RunSession, kind: MethodKind | str, method: object) -> None:
    """Two calls with the same seed must agree exactly."""
    __tracebackhide__ = True
    import torch

    from cfcheck.kinds import kind_spec

    first = call_on_contract_inputs(session, kind, method, seed=1234)
    second = call_on_contract_inputs(session, kind, method, seed=1234)
    if not (torch.equal(first.values, second.values) and torch.equal(first.valid, second.valid)):
        difference = (
            float((first.values - second.values).abs().max())
            if first.values.shape == second.values.shape
            else float("nan")
        )
        _, keyword = kind_spec(kind).call_and_rng
        pytest.fail(
            f"two calls with the same seed differ (max |difference| {difference:.3g}); draw all "
            f"randomness from the `{keyword}` argument cfcheck passes to the method",
            pytrace=False,
        )
