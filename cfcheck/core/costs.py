"""A run's cost accounting: the method's seconds and cfcheck's, per task ("kind/domain/task").

One :class:`Costs` belongs to the run (the session owns it). Its :class:`MethodClock` adds up the
seconds spent inside the method's own calls (:func:`cfcheck.kinds.calling.invoke` advances it);
the rest is read as differences of that clock over a stretch of work:

- a task's generation charges the method's seconds inside it to the task (``method_seconds``,
  with the inputs, whether they came from the cache and the process's peak memory so far);
- a test's call phase is cfcheck's scoring less the method's seconds inside it; the part of those
  not already charged to a task generated meanwhile (a suite's own calls: composition cycles,
  contract checks) is the test's task's ``method_seconds_in_tests``.

Under pytest-xdist each worker sends its per-task generation costs to the controller
(:meth:`Costs.serialize`, :meth:`Costs.merge`); the controller adds the tests' fields up itself
from every test's report, so they are never taken from a worker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["METHOD_IN_CALL", "METHOD_OF_TASK", "Costs", "MethodClock", "peak_rss_mb"]

#: ``record_property`` names of the method's seconds inside a test's call (all, and the part that
#: belongs to the test's task rather than to a task generated meanwhile)
METHOD_IN_CALL, METHOD_OF_TASK = "cfcheck.method_seconds_in_call", "cfcheck.method_seconds_of_task"


class MethodClock:
    """Seconds spent inside the method's own calls, in all, in this process."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def add(self, seconds: float) -> None:
        self.seconds += seconds


def peak_rss_mb() -> float | None:
    """The process's peak resident memory so far (MB), where the platform reports it."""
    try:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
    except (ImportError, OSError):
        return None


class Costs:
    """Per task: the method's seconds generating its outputs, in the calls its tests made, and
    cfcheck's scoring seconds."""

    #: fields the controller adds up from the tests' reports (never taken from a worker)
    TEST_FIELDS = ("scoring_seconds", "method_seconds_in_tests")

    def __init__(self) -> None:
        self.clock = MethodClock()
        self.per_task: dict[str, dict[str, Any]] = {}
        #: the method's seconds already charged to the task they were generated for
        self.charged = 0.0

    def _entry(self, key: str) -> dict[str, Any]:
        return self.per_task.setdefault(key, {})

    def charge_generation(self, key: str, since: float, *, inputs: int, from_cache: bool) -> None:
        """Charge the method's seconds since the clock read ``since`` to task ``key``'s generation."""
        spent = self.clock.seconds - since  # the method's own calls, not cfcheck's checks or cache reads
        self.charged += spent
        self._entry(key).update(method_seconds=spent, inputs=inputs, from_cache=from_cache, peak_rss_mb=peak_rss_mb())

    def time_of_call(self) -> Callable[[], list[tuple[str, float]]]:
        """Start timing one test's call: the returned function gives the test's properties
        (:data:`METHOD_IN_CALL`, :data:`METHOD_OF_TASK`) for the method's seconds inside the call
        so far, none where it spent none."""
        clock, charged = self.clock.seconds, self.charged

        def spent() -> list[tuple[str, float]]:
            in_call = self.clock.seconds - clock
            if in_call <= 0:
                return []
            return [(METHOD_IN_CALL, in_call), (METHOD_OF_TASK, max(0.0, in_call - (self.charged - charged)))]

        return spent

    def add_test_time(self, key: str, seconds: float, properties: Mapping[str, Any]) -> None:
        """One test's call phase for task ``key`` (its duration and its report's properties):
        cfcheck's scoring is the duration less the method's seconds inside it; the method's own
        calls made by the test count as the task's ``method_seconds_in_tests``."""
        method_in_call = float(properties.get(METHOD_IN_CALL, 0.0))
        method_of_task = float(properties.get(METHOD_OF_TASK, 0.0))
        cost = self._entry(key)
        cost["scoring_seconds"] = cost.get("scoring_seconds", 0.0) + max(0.0, seconds - method_in_call)
        if method_of_task > 0:
            cost["method_seconds_in_tests"] = cost.get("method_seconds_in_tests", 0.0) + method_of_task

    def serialize(self) -> str:
        """A worker's per-task costs, for the controller (:meth:`merge`)."""
        return json.dumps(self.per_task)

    def merge(self, serialized: str) -> None:
        """Per-task costs sent by a pytest-xdist worker, less the tests' fields."""
        for key, cost in json.loads(serialized).items():
            self._entry(key).update({k: v for k, v in cost.items() if k not in self.TEST_FIELDS})

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per task, for the scorecard: the method's seconds generating the task's outputs
        (``method_seconds``, and per output), in the calls its tests made
        (``method_seconds_in_tests``, where any), and cfcheck's scoring seconds (the tests' call
        phases less the method's time inside them)."""
        summary = {}
        for key, cost in sorted(self.per_task.items()):
            entry = dict(cost)
            if cost.get("inputs") and "method_seconds" in cost:
                entry["method_seconds_per_output"] = cost["method_seconds"] / cost["inputs"]
            summary[key] = entry
        return summary
