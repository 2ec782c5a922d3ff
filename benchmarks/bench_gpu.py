"""DVCE and FastDiME on a GPU: seconds per counterfactual, cfcheck's share and peak GPU memory.

Run (on a machine with CUDA):
    python benchmarks/bench_gpu.py [--methods dvce,fastdime] [--profiles quick,standard] [--cpu]

For each method and profile, one conformance run of the VCE suites in a fresh process with
``--cfcheck-device cuda`` and the generation cache off (every task calls the method). Printed
per run: the counterfactuals generated, the method's seconds per counterfactual (the time inside
its calls, the scorecard's ``costs``), the run's wall time, cfcheck's share of it (wall less the
method's calls, over wall) and the process's peak GPU memory (``torch.cuda.max_memory_allocated``,
read when the run ends). ``--cpu`` adds the same runs on the CPU beside them. Then the rows as a
Markdown table. On a machine without CUDA it refuses and says so: there is nothing to measure.

The file is also the pytest plugin that reads the peak memory (``-p bench_gpu`` in the runs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_PEAK_FILE = "CFCHECK_BENCH_GPU_PEAK"


def pytest_sessionfinish(session: Any) -> None:
    """In a benchmark run: write the process's peak GPU memory (bytes) where the parent asked."""
    import torch

    target = os.environ.get(_PEAK_FILE)
    if target and torch.cuda.is_available():
        Path(target).write_text(str(torch.cuda.max_memory_allocated()))


def conformance_run(method: str, profile: str, device: str) -> dict[str, float]:
    """One run of the VCE suites in a fresh process: counterfactuals, seconds and peak memory."""
    with tempfile.TemporaryDirectory() as scratch:
        reports, peak = Path(scratch) / "reports", Path(scratch) / "peak"
        env = {
            **os.environ,
            _PEAK_FILE: str(peak),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            f"--method=cfcheck.fixtures.vce.{method}",
            f"--cfcheck-profile={profile}",
            f"--cfcheck-device={device}",
            "--cfcheck-no-cache",
            f"--cfcheck-report-dir={reports}",
            "-p",
            "bench_gpu",
            "-p",
            "no:randomly",
            "-q",
            "-k",
            "vce",
        ]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        cards = list(reports.glob("*/scorecard.json"))
        if len(cards) != 1:
            sys.exit(f"{method} {profile} {device}: expected one scorecard, found {len(cards)}\n{done.stdout[-3000:]}")
        costs = json.loads(cards[0].read_text())["costs"].values()
        peak_bytes = float(peak.read_text()) if peak.exists() else float("nan")
    outputs = sum(c.get("inputs", 0) for c in costs if "method_seconds" in c)
    seconds = sum(c.get("method_seconds", 0.0) + c.get("method_seconds_in_tests", 0.0) for c in costs)
    return {"outputs": outputs, "method": seconds, "wall": wall, "peak_mib": peak_bytes / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="dvce,fastdime")
    parser.add_argument("--profiles", default="quick,standard")
    parser.add_argument("--cpu", action="store_true", help="also run each on the CPU, for comparison")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit(
            "bench_gpu.py measures the GPU path, and CUDA is not available on this machine "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda or 'no CUDA'}): run it where "
            "torch.cuda.is_available() is True. Nothing was measured."
        )
    print(f"GPU: {torch.cuda.get_device_name(0)} ({torch.cuda.device_count()} seen), torch {torch.__version__}")
    devices = ["cuda", "cpu"] if args.cpu else ["cuda"]
    rows = []
    for method in args.methods.split(","):
        for profile in args.profiles.split(","):
            for device in devices:
                run = conformance_run(method, profile, device)
                per_output = run["method"] / run["outputs"] if run["outputs"] else float("nan")
                share = (run["wall"] - run["method"]) / run["wall"]
                peak = f"{run['peak_mib']:.0f} MiB" if device == "cuda" else "—"
                rows.append((method, profile, device, run["outputs"], per_output, run["wall"], share, peak))
                print(
                    f"{method} {profile} on {device}: {run['outputs']} counterfactuals, {per_output:.3f} s each "
                    f"in the method, wall {run['wall']:.1f} s, cfcheck's share {share:.1%}, peak GPU memory {peak}"
                )
    print(
        "\n| method | profile | device | counterfactuals | s per counterfactual | wall s | cfcheck's share | peak GPU memory |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for method, profile, device, outputs, per_output, wall, share, peak in rows:
        print(f"| {method} | {profile} | {device} | {outputs} | {per_output:.3f} | {wall:.1f} | {share:.1%} | {peak} |")


if __name__ == "__main__":
    main()
