"""The persistent generation cache's targets, measured: run the same method twice.

    python benchmarks/generation_cache.py [--sleep 20] [--profile quick] [-k "vce and test_validity"]

A stand-in for a slow method (a diffusion VCE) sleeps ``--sleep`` seconds per call and returns a
fixed blend of the input; the selected suites run twice in fresh subprocesses against one fresh
cache folder. Printed: wall time of each run, the generation phase of each (from the
scorecard's provenance), the method calls (counted by the method itself), and the ratios the
issue sets as targets: second run's generation ≤ 5% of the first's, whole second run ≥ 10×
faster, zero calls and identical scores.
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

ADAPTER = """
import pathlib, time, pytest

class Sleepy:
    cfcheck_version = "benchmark-1"

    def explain(self, x, target, classifier, generator=None):
        with open(pathlib.Path(__file__).parent / "calls.txt", "a") as log:
            log.write("call\\n")
        time.sleep({sleep})
        return (x * 0.5 + 0.25).clone()

@pytest.fixture
def cf_method():
    return Sleepy()
"""


def run_once(folder: Path, profile: str, selection: str, cache: Path) -> tuple[float, dict]:
    env = {**os.environ, "CFCHECK_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1"}
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--method=sleepy",
            f"--cfcheck-profile={profile}",
            "-k",
            selection,
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
        ],
        cwd=folder,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    scorecard = json.loads((folder / "reports" / f"sleepy-{profile}" / "scorecard.json").read_text())
    return wall, scorecard


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep", type=float, default=20.0, help="seconds the stand-in method sleeps per call")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("-k", dest="selection", default="vce and test_validity")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cfcheck-cache-bench-") as tmp:
        folder = Path(tmp)
        (folder / "sleepy.py").write_text(ADAPTER.format(sleep=args.sleep))
        (folder / "pyproject.toml").write_text("[tool.cfcheck]\n")
        cache = folder / "cache"
        first_wall, first = run_once(folder, args.profile, args.selection, cache)
        calls_first = len((folder / "calls.txt").read_text().splitlines())
        second_wall, second = run_once(folder, args.profile, args.selection, cache)
        calls_second = len((folder / "calls.txt").read_text().splitlines()) - calls_first

        def scores(card: dict) -> list:
            return sorted((s["metric"], s["task"], s["value"], s["ci_low"], s["ci_high"]) for s in card["scores"])

        g1, g2 = first["provenance"]["generation"], second["provenance"]["generation"]
        print(f"stand-in method: sleeps {args.sleep:g} s per call; profile {args.profile}; -k {args.selection!r}")
        print("| run | wall (s) | generation (s) | method calls | tasks generated | tasks from cache |")
        print("|---|---|---|---|---|---|")
        print(
            f"| first | {first_wall:.1f} | {g1['seconds']:.2f} | {calls_first} | {g1['tasks_generated']} | {g1['tasks_from_cache']} |"
        )
        print(
            f"| second | {second_wall:.1f} | {g2['seconds']:.2f} | {calls_second} | {g2['tasks_generated']} | {g2['tasks_from_cache']} |"
        )
        print(
            f"second run's generation phase: {100 * g2['seconds'] / max(g1['seconds'], 1e-9):.2f}% of the first's (target <= 5%)"
        )
        print(f"whole second run: {first_wall / second_wall:.1f}x faster (target >= 10x)")
        print(f"scores identical: {scores(first) == scores(second)} ({len(first['scores'])} scores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
