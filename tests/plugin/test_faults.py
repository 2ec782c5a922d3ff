"""Faults read cleanly: a broken method, a broken configuration and an interrupted run.

A method that raises or returns something unusable gets one full report per task (the fault,
and for an exception its type, message and the place in the method's code) in the first test
that needs the task; every later test of the task fails with a one-line pointer to it; the
scorecard records each of them with verdict "error" and the reason.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

#: the suites these tests need (collecting only them keeps each run to seconds)
SUITES = ("--pyargs", "cfcheck.suites.vce.test_validity", "cfcheck.suites.vce.test_closeness", "-p", "no:randomly")
#: two tests of the one task in one suite, one in another
TASK_TESTS = (*SUITES, "-k", "test_coverage or test_target_accuracy or test_elastic_net_distance")

RAISING = """
import pytest

def _step(x):
    raise ValueError("step size must be positive, got -0.1")

class Raising:
    def explain(self, x, target, classifier):
        return _step(x)

@pytest.fixture
def cf_method():
    return Raising()
"""


def _failure_texts(result):
    """(nodeid, failure text) of every failed test, in run order."""
    return [(r.nodeid, r.longreprtext) for r in result.reprec.getreports("pytest_runtest_logreport") if r.failed]


def _pointer(text):
    """(message, test named) of a one-line pointer to a task's full fault report."""
    message, found, where = text.partition(" (full report in ")
    assert found and where.endswith(")") and "\n" not in text, text
    return message, where[:-1]


def _named(nodeid):
    """How a pointer names a test: its node id, with the file where the id has no path (the
    bundled suites lie outside the rootdir)."""
    return f"test_validity.py{nodeid}" if nodeid.startswith("::") else nodeid


def test_a_raising_method_is_reported_once_per_task_then_pointed_to(tiny, scorecard_of):
    tiny.makepyfile(raising=RAISING)
    before = signal.getsignal(signal.SIGTERM)
    result = tiny.runpytest("--method=raising", *TASK_TESTS)
    assert signal.getsignal(signal.SIGTERM) is before  # the run's SIGTERM handler is gone again
    result.assert_outcomes(failed=3)  # failures, not setup errors
    output = result.stdout.str()
    assert "During handling of the above exception" not in output
    assert "Traceback" not in output and "All traceback entries are hidden" not in output
    (first_id, first), *later = _failure_texts(result)
    assert first == (
        "cnn/ideal/seed0: no counterfactuals: explain raised ValueError: step size must be positive, got -0.1\n"
        "    at raising.py:4 in _step"
    )
    assert len(later) == 2
    for _, text in later:
        message, where = _pointer(text)
        assert (
            message
            == "cnn/ideal/seed0: no counterfactuals: explain raised ValueError: step size must be positive, got -0.1"
        )
        assert where == _named(first_id)
    # the failure reports (not the short summary, which pytest prints untruncated when CI is set)
    reports = output.split("short test summary info")[0]
    assert reports.count("at raising.py:4 in _step") == 1
    records = scorecard_of("raising")["scores"]
    assert {(r["suite"], r["metric"]) for r in records} == {
        ("validity", "coverage"),
        ("validity", "target_accuracy"),
        ("closeness", "elastic_net_distance"),
    }
    for record in records:
        assert record["verdict"] == "error" and record["passed"] is False and record["n"] == 0
        assert record["value"] is None and record["task"] == "cnn/ideal/seed0"
        assert record["reason"] == (
            "no counterfactuals: explain raised ValueError: step size must be positive, got -0.1 "
            "(at raising.py:4 in _step)"
        )


def test_an_exception_inside_library_code_also_names_the_methods_own_line(tiny):
    tiny.makepyfile(
        torch_error="""
import pytest, torch

class WrongShape:
    def explain(self, x, target, classifier):
        return classifier(x.flatten(1))  # the CNN takes N×1×32×32

@pytest.fixture
def cf_method():
    return WrongShape()
"""
    )
    contract = ("cfcheck.suites.test_contract", "-k", "test_coverage or test_output_contract and vce")
    result = tiny.runpytest("--method=torch_error", *SUITES, *contract)
    result.assert_outcomes(failed=2)
    assert "During handling of the above exception" not in result.stdout.str()
    (_, task_text), (_, contract_text) = _failure_texts(result)
    assert task_text.startswith("cnn/ideal/seed0: no counterfactuals: explain raised ValueError: expected images")
    # the contract suite calls the method itself: the same report, without the task
    for text in (task_text, contract_text):
        *_, inside_cfcheck, own = text.splitlines()
        assert inside_cfcheck.startswith("    at ") and "cfcheck/models/" in inside_cfcheck
        assert own == "    called from torch_error.py:5 in explain"
    assert contract_text.startswith("explain raised ValueError: expected images")


def test_a_test_asking_the_session_itself_is_recorded_too(tiny, scorecard_of):
    """Not every task test goes through cfcheck_result (the randomisation test asks for a second
    task's counterfactuals): its method fault reads as cleanly and reaches the scorecard."""
    tiny.makepyfile(raising=RAISING)
    tiny.makepyfile(
        test_own="""
import pytest
from cfcheck.kinds.calling import MethodOutputError

pytestmark = pytest.mark.cfcheck_kind("vce")

def test_own_score(cfcheck_session, cfcheck_method, cfcheck_task):
    try:
        cfcheck_session.outputs(cfcheck_task, cfcheck_method)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
"""
    )
    result = tiny.runpytest("--method=raising", "test_own.py")
    result.assert_outcomes(failed=1)
    assert "During handling of the above exception" not in result.stdout.str()
    ((_, text),) = _failure_texts(result)
    assert text.endswith(
        "explain raised ValueError: step size must be positive, got -0.1\n    at raising.py:4 in _step"
    )
    (record,) = scorecard_of("raising")["scores"]
    assert (record["suite"], record["metric"], record["verdict"]) == ("own", "own_score", "error")
    assert record["reason"].startswith("no counterfactuals: explain raised ValueError")


# Each output fault, chosen by the task seed (seeds 0..5 of one classifier and pair set).
BAD_OUTPUTS = """
import pytest, torch

def nan(x): return torch.full_like(x, float("nan"))
def inf(x): out = x.clone(); out[0, 0, 0, 0] = float("inf"); return out
def shape(x): return x[:, :, :16]
def dtype(x): return x.double()
def range_(x): return torch.full_like(x, 1.5)
def mutate(x): x.mul_(0.5); return x.clone()

FAULTS = [nan, inf, shape, dtype, range_, mutate]

class BadOutputs:
    def explain(self, x, target, classifier, generator=None):
        return FAULTS[generator.initial_seed()](x)

@pytest.fixture
def cf_method():
    return BadOutputs()
"""

EXPECTED = {  # N: the number of inputs of a task
    "seed0": "explain returned NaN or Inf values for N of N inputs",
    "seed1": "explain returned NaN or Inf values for 1 of N inputs",
    "seed2": "explain returned shape (N, 1, 16, 32); expected (N, 1, 32, 32) (one per input) or (N, K, 1, 32, 32)",
    "seed3": "explain returned dtype torch.float64; expected torch.float32",
    "seed4": "explain returned values in [1.5, 1.5]; they must lie in [0, 1]",
    "seed5": "explain modified its input x in place; it must leave x unchanged",
}


def test_each_bad_output_fails_its_task_with_a_precise_reason(tiny, tiny_settings, scorecard_of):
    tiny.makepyprojecttoml(tiny_settings.replace("seeds = 1", "seeds = 6"))
    tiny.makepyfile(bad_outputs=BAD_OUTPUTS)
    result = tiny.runpytest("--method=bad_outputs", *SUITES, "-k", "test_coverage or test_target_accuracy")
    result.assert_outcomes(failed=12)
    failures = _failure_texts(result)
    n = str(_task_size(tiny))
    records = scorecard_of("bad_outputs")["scores"]
    assert len(records) == 12 and {r["verdict"] for r in records} == {"error"}
    reasons = {(r["task"], r["metric"]): r["reason"] for r in records}
    for seed, fault in EXPECTED.items():
        fault = (
            fault.replace("N of", f"{n} of")
            .replace("of N", f"of {n}")
            .replace("(N, 1", f"({n}, 1")
            .replace("(N, K", f"({n}, K")
        )
        (first_id, first), (_, second) = [(i, t) for i, t in failures if f"-{seed}]" in i]
        assert first == f"cnn/ideal/{seed}: no counterfactuals: {fault}"
        assert _pointer(second) == (f"cnn/ideal/{seed}: no counterfactuals: {fault}", _named(first_id))
        assert reasons[(f"cnn/ideal/{seed}", "coverage")] == f"no counterfactuals: {fault}"


def _task_size(pytester):
    from cfcheck.profiles import claim_section_settings, read_user_settings, resolve_profile

    return (
        claim_section_settings(resolve_profile("standard", read_user_settings(pytester.path)))
        .section("vce")
        .n_per_source
        * 10
    )


def test_sigterm_writes_an_incomplete_scorecard(tiny, scorecard_of):
    tiny.makepyfile(
        slow="""
import pathlib, time, pytest

class Slow:
    def explain(self, x, target, classifier):
        pathlib.Path("explaining").touch()
        time.sleep(120)
        return x.clone()

@pytest.fixture
def cf_method():
    return Slow()
"""
    )
    process = tiny.popen(
        [sys.executable, "-m", "pytest", "--method=slow", *SUITES, "-k", "test_coverage", "-p", "no:cacheprovider"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (tiny.path / "explaining").exists():
            assert process.poll() is None, process.communicate()[0].decode()
            assert time.monotonic() < deadline, "the method was never called"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0].decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "(incomplete: SIGTERM)" in output
    assert scorecard_of("slow")["status"] == "incomplete"


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ('profil = "quick"', "unknown [tool.cfcheck] setting 'profil'"),
        ('profile = "fast"', "unknown cfcheck profile 'fast'"),
    ],
)
def test_a_bad_cfcheck_table_warns_without_method_and_is_an_error_with_it(pytester, setting, problem):
    pytester.makepyprojecttoml(f"[tool.cfcheck]\n{setting}\n")
    pytester.makepyfile(test_project="def test_ordinary():\n    assert True\n")
    ordinary = pytester.runpytest()
    ordinary.assert_outcomes(passed=1, warnings=1)
    warning = next(line for line in ordinary.outlines if "PytestConfigWarning" in line)
    assert f"PytestConfigWarning: cfcheck: {problem}" in warning
    assert warning.endswith("(ignored: cfcheck runs only with --method)")
    pytester.makepyfile(adapter="import pytest\n\n@pytest.fixture\ndef cf_method():\n    return None\n")
    pytester.syspathinsert()
    checked = pytester.runpytest("--method=adapter")
    assert checked.ret == pytest.ExitCode.USAGE_ERROR
    assert f"cfcheck: {problem}" in checked.stderr.str()
