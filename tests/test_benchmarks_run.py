"""The pytest-benchmark suites in benchmarks/ run: each benchmark once (``--benchmark-disable``)
at tiny sizes on one thread, in a subprocess, so that a change to what they call cannot leave
them broken until someone measures again. Figures are not checked here: they are measured with
``pytest benchmarks --benchmark-only`` (docs/speed.md)."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_suites_run_at_tiny_sizes():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CFCHECK_BENCH_THREADS": "1"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "benchmarks",
            "--benchmark-disable",
            "--bench-n",
            "20",
            "--bench-superlu",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "-rfEs",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    summary = output.strip().splitlines()[-1]
    assert not re.search(r"\b(failed|errors?|skipped)\b", summary), summary
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 60, f"only {passed} benchmarks ran: {summary}"  # 9 metrics, 6 methods, 4 morpho, ROAD 8, ...
