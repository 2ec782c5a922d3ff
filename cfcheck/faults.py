"""How cfcheck reports a method that fails, and a run that is stopped.

A method fault (it raised, or returned something that cannot be scored) fails every test of
its task in the call phase, with the full report once and a pointer to it after; each of those
tests is recorded with verdict "error" so the scorecard names the suites it cost. SIGTERM, as
CI runners send on a timeout, is turned into KeyboardInterrupt so the scorecard is still
written, marked incomplete. The pytest hooks that use these live in :mod:`cfcheck.plugin`.
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck.metrics.key import MetricKey

if TYPE_CHECKING:
    from cfcheck.session import CfcheckSession

#: on a test item: why its task has no counterfactuals (the test fails with it, body not run)
fault_key = pytest.StashKey[str]()
#: the SIGTERM handler cfcheck installed and the one it replaced
sigterm_key = pytest.StashKey[tuple[Any, Any]]()
sigterm_received_key = pytest.StashKey[bool]()


def stop_on_sigterm(config: pytest.Config) -> None:
    """Turn SIGTERM (what CI runners send on a timeout) into KeyboardInterrupt, as Ctrl-C is,
    so an interrupted run still writes its scorecard, marked incomplete. A second SIGTERM gets
    the previous handler (by default: the process ends at once)."""
    if hasattr(config, "workerinput") or threading.current_thread() is not threading.main_thread():
        return  # xdist workers: the controller writes the scorecard
    previous = signal.getsignal(signal.SIGTERM)
    previous = signal.SIG_DFL if previous is None else previous

    def interrupt(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, previous)
        config.stash[sigterm_received_key] = True
        raise KeyboardInterrupt("SIGTERM received")

    signal.signal(signal.SIGTERM, interrupt)
    config.stash[sigterm_key] = (interrupt, previous)


def record_fault_raised_by_test(item: pytest.Item, session: CfcheckSession, cause: BaseException | None) -> None:
    """A task test that asked the session for counterfactuals itself (not through cfcheck_result,
    which records its own faults) and failed on a method fault: record it too."""
    from cfcheck.kinds.calling import MethodOutputError

    callspec = getattr(item, "callspec", None)
    task = callspec.params.get("cfcheck_task") if callspec is not None else None
    if isinstance(cause, MethodOutputError) and task is not None and fault_key not in item.stash:
        item.stash[fault_key] = str(cause)
        record_fault(item, session, cause.summary)


def node_label(node: Any) -> str:
    """The test's node id; with its file name where pytest's id has no path (as for the bundled
    suites, which lie outside the user's rootdir)."""
    return f"{node.path.name}{node.nodeid}" if node.nodeid.startswith("::") else node.nodeid


class NoCounterfactuals:
    """Stands in for the result of a task without counterfactuals: the test itself never runs
    (see pytest_pyfunc_call); a fixture built on it fails with the fault."""

    def __init__(self, fault: str) -> None:
        self._fault = fault

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        pytest.fail(self._fault, pytrace=False)


def record_fault(node: Any, session: CfcheckSession, reason: str) -> None:
    """A score record with verdict "error" for a test that got no counterfactuals: suite from
    the module, metric from the test's name plus its other parameters (``oracle_score:oracle_resnet``)."""
    from cfcheck.scoring import ScoreRecorder

    metric = getattr(node, "originalname", node.name).removeprefix("test_") or node.name
    callspec = getattr(node, "callspec", None)
    variants = [
        str(value)
        for name, value in (callspec.params.items() if callspec else ())
        if name != "cfcheck_task" and isinstance(value, (str, int, float))
    ]
    ScoreRecorder(session, node).error(MetricKey(metric, ":".join(variants) or None), reason)


def restore_sigterm(config: pytest.Config) -> None:
    installed = config.stash.get(sigterm_key, None)
    if installed is not None and signal.getsignal(signal.SIGTERM) is installed[0]:
        signal.signal(signal.SIGTERM, installed[1])
