"""Seconds cfcheck's VCE suites spend scoring counterfactuals, measured on a conformance run.

Run:  python benchmarks/bench_suite_scoring.py [--profile full] [--threads 2] [--method cfcheck.fixtures.vce.truth]

Unlike ``test_scoring.py``, which times a list of metric functions, this runs the suites as a
user does (``pytest --method=... -o testpaths=suites``), so every score the suites compute is in
the figure: validity, COUT (21 passes of the explained classifier per counterfactual), closeness,
diversity, realism with floors and set CIs, IM1/IM2, the ground truth, the random-classifier
checks. The method is the truth (rendering, nearly free) and its seconds are not counted: the
scoring is each test's call time less the method's time inside it, summed over the scorecard's
tasks (``costs.scoring_seconds``). Inputs' outputs from the derived-data cache (a second run on
a machine) are not recomputed, as in any run after the first.

The floor is the time inside the evaluation networks' forward passes during the run (every
gradient-free ``nn.Module`` call, outermost only). Randomisation-stage tasks (``cnn~layer``)
are scored by the cascading-randomisation test alone; their scoring counts in the total, their
counterfactuals do not (the per-10,000 figure is per fully scored counterfactual).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--method", default="cfcheck.fixtures.vce.truth")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before torch is imported
    start = time.perf_counter()
    import torch

    forward = {"seconds": 0.0, "depth": 0}
    original_call = torch.nn.Module.__call__

    def timed_call(module: torch.nn.Module, *inputs: object, **kwargs: object) -> object:
        if forward["depth"] or torch.is_grad_enabled():
            return original_call(module, *inputs, **kwargs)
        forward["depth"] += 1
        begin = time.perf_counter()
        try:
            return original_call(module, *inputs, **kwargs)
        finally:
            forward["seconds"] += time.perf_counter() - begin
            forward["depth"] -= 1

    torch.nn.Module.__call__ = timed_call  # type: ignore[method-assign]
    by_test = TestCallSeconds(forward)
    with tempfile.TemporaryDirectory() as reports:
        code = pytest.main(
            [
                f"--method={args.method}",
                f"--cfcheck-profile={args.profile}",
                "-o",
                "testpaths=suites",
                "-q",
                "-p",
                "no:randomly",
                "--no-header",
                "-o",
                "console_output_style=classic",
                f"--cfcheck-report-dir={reports}",
            ],
            plugins=[by_test],
        )
        wall = time.perf_counter() - start
        scorecards = list(Path(reports).glob("*/scorecard.json"))
        if len(scorecards) != 1:
            sys.exit(f"expected one scorecard under {reports}, found {len(scorecards)} (pytest exit code {code})")
        costs = json.loads(scorecards[0].read_text())["costs"]
    from cfcheck.models.zoo import STAGE_SEPARATOR

    full = {k: c for k, c in costs.items() if STAGE_SEPARATOR not in k.split("/")[2]}
    scored = sum(c["inputs"] for c in full.values())
    scoring = sum(c.get("scoring_seconds", 0.0) for c in costs.values())
    stages = scoring - sum(c.get("scoring_seconds", 0.0) for c in full.values())
    print(f"\n{args.method}, profile {args.profile}, {args.threads} torch threads")
    print(f"tasks: {len(full)} fully scored ({scored} counterfactuals), {len(costs) - len(full)} randomisation stages")
    print(f"scoring seconds (tests' call time less the method's): {scoring:.1f}  (randomisation stages {stages:.1f})")
    print(f"evaluation networks' forward passes in the run: {forward['seconds']:.1f} s")
    print(
        f"per 10,000 fully scored counterfactuals: scoring {scoring / scored * 1e4:.1f} s, "
        f"forward-pass floor {forward['seconds'] / scored * 1e4:.1f} s, ratio {scoring / forward['seconds']:.2f}x"
    )
    print(f"whole run {wall:.1f} s")
    total = sum(by_test.seconds.values())
    floor = sum(by_test.forward.values())
    print(
        f"\nwhere the scoring is above its floor, per suite test function (call time, the method's seconds "
        f"included; {total:.1f} s in all, {floor:.1f} s of it the evaluation networks' forward passes):"
    )
    print("  call time   share   forward passes   above the floor   test")
    for name, seconds in sorted(by_test.seconds.items(), key=lambda item: -item[1])[:14]:
        passes = by_test.forward.get(name, 0.0)
        print(f"  {seconds:7.1f} s  {seconds / total:6.1%}  {passes:11.1f} s  {seconds - passes:13.1f} s   {name}")
    budget = 1.3 * forward["seconds"]
    print(
        f"the 1.3x target allows {budget:.1f} s of scoring; the run took {scoring:.1f} s "
        f"({'met' if scoring <= budget else f'{scoring - budget:.1f} s over'})"
    )


class TestCallSeconds:
    """A pytest plugin summing each test function's call-phase duration over its parameters, and
    the evaluation networks' forward-pass seconds inside those calls (read from ``forward``, the
    running total the timed ``nn.Module.__call__`` keeps)."""

    def __init__(self, forward: dict[str, float]) -> None:
        self.seconds: dict[str, float] = {}
        self.forward: dict[str, float] = {}
        self._running = forward

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        before = self._running["seconds"]
        yield
        name = item.nodeid.split("[")[0].split("::")[-1]
        self.forward[name] = self.forward.get(name, 0.0) + self._running["seconds"] - before

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            name = report.nodeid.split("[")[0].split("::")[-1]
            self.seconds[name] = self.seconds.get(name, 0.0) + float(report.duration)


if __name__ == "__main__":
    main()
