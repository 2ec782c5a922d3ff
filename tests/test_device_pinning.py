"""Worker pinning: under pytest-xdist each worker of a CUDA run gets its own GPU (faked GPU counts:
no GPU is needed), and a CPU run is left as it is."""

from __future__ import annotations

import pytest
import torch

from cfcheck.core.devices import describe_device, pin_worker_device, worker_device
from cfcheck.options import resolve_device

CUDA = torch.device("cuda")


@pytest.mark.parametrize(("count", "expected"), [(8, list(range(8))), (4, [0, 1, 2, 3, 0, 1, 2, 3]), (1, [0] * 8)])
def test_each_worker_gets_the_gpu_of_its_index_modulo_the_count(count, expected):
    assert [worker_device(CUDA, f"gw{n}", count) for n in range(8)] == [torch.device("cuda", i) for i in expected]


@pytest.mark.parametrize(
    ("device", "worker", "count"),
    [
        (torch.device("cpu"), "gw3", 4),  # the CPU: threads are shared instead (cfcheck.core.threads)
        (torch.device("cuda", 2), "gw0", 4),  # a GPU the user named
        (CUDA, None, 4),  # a single process
        (CUDA, "main", 4),  # not an xdist worker name
        (CUDA, "gw1", 0),  # no GPU seen
    ],
)
def test_everything_else_is_left_as_asked(device, worker, count):
    assert worker_device(device, worker, count) == device


@pytest.fixture
def four_gpus(monkeypatch):
    """A machine that says it has four GPUs; set_device records instead of touching one."""
    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: f"Fake GPU {index}")
    return chosen


@pytest.mark.parametrize("asked", ["cuda", "auto"])
def test_a_cuda_run_pins_the_worker_and_makes_its_gpu_current(four_gpus, monkeypatch, asked):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw6")
    pinned = pin_worker_device(resolve_device(asked))
    assert pinned == torch.device("cuda", 2) and four_gpus == [pinned]
    assert describe_device(pinned) == "cuda:2 (Fake GPU 2)"


def test_a_cpu_run_under_xdist_stays_on_the_cpu(four_gpus, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw6")
    assert pin_worker_device(resolve_device("cpu")) == torch.device("cpu") and four_gpus == []
    assert describe_device(torch.device("cpu")) == "cpu"


def test_the_plugin_pins_the_worker_it_runs_in(pytester, four_gpus, monkeypatch):
    """Through the plugin: a run as xdist worker gw5 with --cfcheck-device cuda reports cuda:1."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw5")
    pytester.makepyfile(
        blend="import pytest\n\n@pytest.fixture\ndef cf_method():\n    return None\n",
        test_nothing="def test_nothing():\n    pass\n",
    )
    pytester.syspathinsert()
    result = pytester.runpytest_inprocess(
        "--method=blend", "--cfcheck-device=cuda", "--collect-only", "-p", "no:randomly", "test_nothing.py"
    )
    assert "device cuda:1," in result.stdout.str(), result.stdout.str()
    assert four_gpus == [torch.device("cuda", 1)]
