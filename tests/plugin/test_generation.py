"""Every way a method's output can be unusable gives one precise error."""

from __future__ import annotations

import pytest
import torch

from cfcheck.generation import MethodOutputError, call_method, check_output


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
    assert output.cfs.shape == (4, 3, 1, 8, 8)
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
    with pytest.raises(MethodOutputError, match="modified its input"):
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
    assert str(first) == "cnn/ideal/seed0: no counterfactuals: explain raised ValueError: no\nsecond line\n    at m.py:3 in f"
    later = fault.for_task("cnn/ideal/seed0", "test_a.py::test_y")
    assert str(later) == (
        "cnn/ideal/seed0: no counterfactuals: explain raised ValueError: no (full report in test_a.py::test_x)"
    )
    assert first.summary == later.summary == "no counterfactuals: explain raised ValueError: no … (at m.py:3 in f)"


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

    from cfcheck.plugin import _share_cpu_between_xdist_workers

    before = torch.get_num_threads()
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    try:
        _share_cpu_between_xdist_workers(SimpleNamespace())  # the controller keeps its threads
        assert torch.get_num_threads() == before
        _share_cpu_between_xdist_workers(SimpleNamespace(workerinput={}))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
