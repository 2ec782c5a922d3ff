"""Calling a method: every way an output can be unusable, an exception, a hang or a mutated
input gives one precise error."""

from __future__ import annotations

import time

import pytest
import torch

from cfcheck.kinds.calling import (
    MethodOutputError,
    MethodTimeout,
    OutputSpec,
    Progress,
    invoke,
    time_limit,
)
from cfcheck.kinds.calling import (
    check_output as _check,
)

IMAGES = OutputSpec(call="explain", several=True, value_range=(0.0, 1.0))


def check_output(raw, x, spec=IMAGES):
    return _check(raw, x, spec)


def call_method(method, x, target, classifier, generator):
    """One VCE call the way the engine makes it."""
    raw = invoke(
        "explain",
        method.explain,
        (x, target, classifier),
        {"generator": generator} if "generator" in method.explain.__code__.co_varnames else {},
        watched={"x": x, "target": target},
    )
    return check_output(raw, x)


def _x():
    return torch.rand(4, 1, 8, 8)


@pytest.mark.parametrize(
    ("make_output", "message"),
    [
        (lambda x: x.numpy(), "expected a torch.Tensor"),
        (lambda x: x[:2], "shape"),
        (lambda x: x.double(), "dtype torch.float64"),
        (lambda x: x * float("nan"), "NaN or Inf"),
        (lambda x: x + 2, "must lie in \\[0, 1\\]"),
        (lambda x: (x, x, x), "tuple of 3"),
        (lambda x: (x, torch.ones(4)), "bool tensor"),
    ],
)
def test_bad_outputs_are_rejected_with_a_reason(make_output, message):
    x = _x()
    with pytest.raises(MethodOutputError, match=message):
        check_output(make_output(x), x)


def test_several_counterfactuals_per_input_are_accepted():
    x = _x()
    output = check_output(torch.stack([x, x, x], dim=1), x)
    assert output.values.shape == (4, 3, 1, 8, 8)
    assert output.valid.all()


def test_abstention_mask_is_kept():
    x = _x()
    mask = torch.tensor([True, False, True, False])
    assert torch.equal(check_output((x.clone(), mask), x).valid, mask)


class Mutating:
    def explain(self, x, target, classifier):
        x.mul_(0.5)
        return x.clone()


class Raising:
    def explain(self, x, target, classifier):
        raise RuntimeError("out of ideas")


def test_in_place_mutation_is_detected():
    with pytest.raises(MethodOutputError, match="explain modified its input x in place; it must leave x unchanged"):
        call_method(Mutating(), _x(), torch.zeros(4, dtype=torch.long), torch.nn.Identity(), torch.Generator())


def test_exceptions_become_method_errors():
    with pytest.raises(MethodOutputError, match="RuntimeError: out of ideas") as caught:
        call_method(Raising(), _x(), torch.zeros(4, dtype=torch.long), torch.nn.Identity(), torch.Generator())
    line = Raising.explain.__code__.co_firstlineno + 1
    assert caught.value.where == (f"at {_here()}:{line} in explain",)
    assert str(caught.value) == f"explain raised RuntimeError: out of ideas\n    at {_here()}:{line} in explain"
    assert caught.value.summary == f"explain raised RuntimeError: out of ideas (at {_here()}:{line} in explain)"
    assert caught.value.__suppress_context__  # no "During handling of the above exception"


def _here():
    import os

    return os.path.relpath(__file__) if not os.path.relpath(__file__).startswith("..") else __file__


def test_a_task_fault_is_reported_in_full_once_then_pointed_to():
    fault = MethodOutputError("explain raised ValueError: no\nsecond line", where=("at m.py:3 in f",))
    first = fault.for_task("cnn/ideal/seed0", "test_a.py::test_x")
    assert str(first) == "cnn/ideal/seed0: no outputs: explain raised ValueError: no\nsecond line\n    at m.py:3 in f"
    later = fault.for_task("cnn/ideal/seed0", "test_a.py::test_y", noun="counterfactuals")
    assert str(later) == (
        "cnn/ideal/seed0: no counterfactuals: explain raised ValueError: no (full report in test_a.py::test_x)"
    )
    assert first.summary == "no outputs: explain raised ValueError: no … (at m.py:3 in f)"
    assert later.summary == "no counterfactuals: explain raised ValueError: no … (at m.py:3 in f)"


def test_generator_is_passed_when_accepted():
    seen = {}

    class Seeded:
        def explain(self, x, target, classifier, generator=None):
            seen["generator"] = generator
            return torch.rand(x.shape, generator=generator)

    generator = torch.Generator().manual_seed(3)
    call_method(Seeded(), _x(), torch.zeros(4, dtype=torch.long), torch.nn.Identity(), generator)
    assert seen["generator"] is generator


def test_xdist_workers_share_the_cores(monkeypatch):
    from types import SimpleNamespace

    from cfcheck.core.threads import share_cpu_between_xdist_workers

    before = torch.get_num_threads()
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    try:
        share_cpu_between_xdist_workers(SimpleNamespace())  # the controller keeps its threads
        assert torch.get_num_threads() == before
        share_cpu_between_xdist_workers(SimpleNamespace(workerinput={}))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(
    ("spec", "make_output", "message"),
    [
        (
            OutputSpec(call="attribute"),
            lambda x: torch.stack([x, x], 1),
            r"attribute returned shape \(4, 2, 1, 8, 8\); expected \(4, 1, 8, 8\) \(one per input\)$",
        ),
        (OutputSpec(call="explain", several=True, required_k=True), lambda x: x, r"expected \(4, K, 1, 8, 8\)$"),
        (
            OutputSpec(call="counterfactual", value_range=(0.0, 1.0)),
            lambda x: x - 1,
            r"counterfactual returned values in \[-0\.\d+, -0\.\d+\]; they must lie in \[0, 1\]$",
        ),
    ],
)
def test_each_kind_states_its_own_output_shape(spec, make_output, message):
    x = torch.rand(4, 1, 8, 8) * 0.9 + 0.05
    with pytest.raises(MethodOutputError, match=message):
        check_output(make_output(x), x, spec)


def test_unbounded_outputs_are_kept_as_returned():
    x = torch.rand(4, 1, 8, 8)
    saliency = torch.randn(4, 1, 8, 8) * 100
    assert torch.equal(check_output(saliency, x, OutputSpec(call="attribute")).values[:, 0], saliency)


def test_a_mutated_dict_argument_is_named():
    parents = {"thickness": torch.ones(3)}

    def counterfactual(x, parents, intervention):
        parents["thickness"].add_(1)
        return x

    x = torch.rand(3, 1, 4, 4)
    with pytest.raises(MethodOutputError, match=r"modified its input parents\['thickness'\] in place"):
        invoke(
            "counterfactual",
            counterfactual,
            (x, parents, {}),
            {},
            watched={"x": x, "parents['thickness']": parents["thickness"]},
        )


def test_a_call_past_its_time_limit_fails_with_the_limit_named():
    def hangs(x):
        while True:
            time.sleep(0.01)

    started = time.monotonic()
    with pytest.raises(MethodOutputError, match=r"explain did not return within the per-call timeout of 0\.2 s"):
        invoke("explain", hangs, (torch.zeros(1),), {}, timeout=0.2)
    assert time.monotonic() - started < 5
    # the alarm is gone: a later slow call is not interrupted
    time.sleep(0.3)


def test_a_method_catching_exception_cannot_swallow_the_timeout():
    def stubborn():
        try:
            time.sleep(5)
        except Exception:  # noqa: BLE001 - what a careless method does
            return "swallowed"

    with pytest.raises(MethodTimeout), time_limit(0.1):
        stubborn()


def test_progress_reports_rate_and_eta(monkeypatch):
    lines = []
    clock = iter([0.0, 10.0])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    progress = Progress(100, lines.append)
    progress.update(25)
    assert lines == ["25/100 inputs (2.5/s, 10 s, ETA 30 s)"]


def test_an_outer_alarm_is_restored_after_the_call():
    """pytest-timeout (signal method) arms the same timer: cfcheck's limit must not disarm it."""
    import signal

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        invoke("explain", lambda: None, (), {}, timeout=5)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 0.5
        time.sleep(0.7)
        assert fired == [True]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("cores", "load", "threads"), [(2, 0.0, 2), (2, 0.9, 1), (2, 0.4, 2), (8, 3.2, 5), (2, 7.0, 1), (4, None, 4)]
)
def test_a_single_process_takes_the_free_cores(cores, load, threads):
    from cfcheck.core.threads import threads_for_free_cores

    assert threads_for_free_cores(cores, load) == threads


def test_a_method_may_ask_for_smaller_calls():
    from cfcheck.kinds.base import method_batch_size

    class Slow:
        cfcheck_batch_size = 40

    class Plain:
        pass

    class Wrong:
        cfcheck_batch_size = 0

    assert method_batch_size(Slow(), 128) == 40
    assert method_batch_size(Plain(), 128) == 128
    with pytest.raises(ValueError, match=r"Wrong.cfcheck_batch_size must be a positive int, got 0"):
        method_batch_size(Wrong(), 128)


def test_a_bundled_reference_method_is_a_methods_own_code_not_library_code():
    """A fault's site names the method's own line; a bundled method (any kind's ``methods/`` folder and
    the helpers they share) is the method's own code, the kinds' engine is cfcheck's."""
    import cfcheck.kinds.calling as calling
    import cfcheck.kinds.method_helpers as helpers
    import cfcheck.kinds.scm.methods.vae as vae
    import cfcheck.kinds.vce.methods.wachter as wachter
    import cfcheck.kinds.vce.spec as spec

    assert [calling._is_library(m.__file__) for m in (wachter, vae, helpers)] == [False, False, False]
    assert [calling._is_library(m.__file__) for m in (spec, calling, torch)] == [True, True, True]
