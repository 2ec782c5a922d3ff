"""The run's cost accounting (cfcheck.core.costs): the method's clock, per-task charges, a test's
call phase, and the xdist merge."""

from __future__ import annotations

import json
import time

import pytest

from cfcheck.core.costs import METHOD_IN_CALL, METHOD_OF_TASK, Costs
from cfcheck.kinds.calling import MethodOutputError, invoke


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def test_invoke_advances_only_the_clock_it_is_given():
    mine, other = Costs(), Costs()
    invoke("explain", _sleep, (0.05,), {}, clock=mine.clock)
    assert 0.05 <= mine.clock.seconds < 0.5
    assert other.clock.seconds == 0.0  # two runs in one process keep their own time
    invoke("explain", _sleep, (0.0,), {})  # no clock: nothing is charged anywhere
    assert other.clock.seconds == 0.0


def test_a_raising_call_is_timed_too():
    costs = Costs()

    def fails() -> None:
        time.sleep(0.02)
        raise RuntimeError("boom")

    with pytest.raises(MethodOutputError):
        invoke("explain", fails, (), {}, clock=costs.clock)
    assert costs.clock.seconds >= 0.02


def test_generation_charges_the_task_and_a_test_gets_the_rest():
    costs = Costs()
    spent = costs.time_of_call()
    assert spent() == []  # the method did not run: no properties
    since = costs.clock.seconds
    costs.clock.add(2.0)  # a task generated inside the test's call
    costs.charge_generation("vce/morpho/t", since, inputs=4, from_cache=False)
    costs.clock.add(0.5)  # the test's own calls (composition cycles)
    properties = dict(spent())
    assert properties == {METHOD_IN_CALL: 2.5, METHOD_OF_TASK: 0.5}
    costs.add_test_time("vce/morpho/t", 3.0, properties)
    summary = costs.summary()["vce/morpho/t"]
    assert summary["method_seconds"] == 2.0 and summary["method_seconds_per_output"] == 0.5
    assert summary["scoring_seconds"] == 0.5 and summary["method_seconds_in_tests"] == 0.5
    assert summary["inputs"] == 4 and summary["from_cache"] is False


def test_the_controller_keeps_its_own_test_fields_when_merging_a_worker():
    worker, controller = Costs(), Costs()
    worker.charge_generation("scm/morpho/t", 0.0, inputs=2, from_cache=True)
    worker.add_test_time("scm/morpho/t", 9.0, {})  # a worker's test fields must not be taken
    controller.add_test_time("scm/morpho/t", 1.0, {})
    controller.merge(worker.serialize())
    merged = controller.summary()["scm/morpho/t"]
    assert merged["scoring_seconds"] == 1.0 and merged["from_cache"] is True and merged["inputs"] == 2
    assert json.loads(worker.serialize())["scm/morpho/t"]["scoring_seconds"] == 9.0
