"""Per-input cost of each SCM metric, as the quick SCM suites compute it for one generator.

Run:  python benchmarks/bench_scm_metrics.py [--method fixtures/scm/vae.py] [--profile quick]

The SCM suites run twice in a subprocess with one torch thread and a private generation cache:
the first run calls the method (its seconds are the method's cost and are printed apart); the
second reads every counterfactual, composition cycle included, from that cache, so its test times
are cfcheck's scoring alone. Each test's time comes from pytest's JUnit report (setup, call and
teardown) and its score's ``n`` from the properties cfcheck records there; a metric's cost per
input is the sum of its tests' seconds over the sum of their n. The first test of a task also pays
for what later scores of the task share (its inputs, the evaluation models' first use, the realism
references), so the figures are what each metric adds in a real run, not each in isolation.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_suites(method: str, profile: str, workdir: Path, cache: Path, report: Path) -> float:
    """One run of the SCM suites; returns its wall seconds."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(REPO / "suites" / "scm"),
        f"--method={method}",
        f"--cfcheck-profile={profile}",
        f"--cfcheck-cache-dir={cache}",
        f"--junitxml={report}",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-o",
        "addopts=",
    ]
    start = time.perf_counter()
    subprocess.run(command, cwd=workdir, env=env, check=False, capture_output=True, text=True)
    if not report.is_file():
        raise SystemExit(f"the suites wrote no JUnit report; run by hand: {' '.join(command)}")
    return time.perf_counter() - start


def metric_costs(report: Path) -> dict[str, tuple[int, int, float]]:
    """metric → (scores, inputs scored, seconds) from a JUnit report cfcheck's plugin filled."""
    costs: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for case in ElementTree.parse(report).iter("testcase"):
        properties = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        # a score's properties are cfcheck.<metric>.<field>; <metric> may hold a ":" but no "."
        metrics = {
            name[len("cfcheck.") : -len(".kind")]
            for name in properties
            if name.startswith("cfcheck.") and name.endswith(".kind")
        }
        for metric in metrics:
            n = properties.get(f"cfcheck.{metric}.n", "")
            entry = costs[metric]
            entry[0] += 1
            entry[1] += int(float(n)) if n not in ("", "None", "nan") else 0
            entry[2] += float(case.get("time", 0.0)) / len(metrics)
    return {metric: (int(s), int(n), t) for metric, (s, n, t) in costs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default=str(REPO / "fixtures" / "scm" / "vae.py"))
    parser.add_argument("--profile", default="quick")
    args = parser.parse_args()
    method = args.method if not Path(args.method).exists() else str(Path(args.method).resolve())
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        cold = run_suites(method, args.profile, work, work / "cache", work / "cold.xml")
        warm = run_suites(method, args.profile, work, work / "cache", work / "warm.xml")
        costs = metric_costs(work / "warm.xml")
    print(
        f"{method}, {args.profile} profile, one thread: first run {cold:.1f} s (calls the method), "
        f"second {warm:.1f} s (every output from the generation cache: start-up and scoring)"
    )
    print(f"{'metric':<40} {'scores':>6} {'inputs':>7} {'seconds':>8} {'ms/input':>9}")
    for metric, (scores, inputs, seconds) in sorted(costs.items(), key=lambda item: -item[1][2]):
        per_input = f"{1000 * seconds / inputs:9.2f}" if inputs else f"{'-':>9}"
        print(f"{metric:<40} {scores:6d} {inputs:7d} {seconds:8.2f} {per_input}")
    total = sum(c[2] for c in costs.values())
    print(f"{'all scores':<40} {sum(c[0] for c in costs.values()):6d} {'':>7} {total:8.2f}")


if __name__ == "__main__":
    main()
