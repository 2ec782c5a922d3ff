"""The same conformance run as one process, as ``-n 2``, and as two shards plus ``cfcheck merge``:
wall times and how far the scores of the three scorecards are apart.

Run:  python benchmarks/bench_sharding.py [--profile standard] [--method cfcheck.fixtures.vce.wachter]

Every run uses ``--cfcheck-no-cache`` (each generates its own outputs) and its own report
folder under ``--out``. The shards run one after the other here; on two machines the wall time
of a sharded run is the slower shard plus the merge. Scores are compared by identity key
(kind/domain/suite/metric[task]); a verdict that differs between two scorecards is listed.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def run(command: list[str], env_threads: int | None = None) -> float:
    import os

    env = dict(os.environ)
    if env_threads is not None:
        env.update(OMP_NUM_THREADS=str(env_threads), MKL_NUM_THREADS=str(env_threads))
    started = time.monotonic()
    completed = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    if completed.returncode not in (0, 1):  # 1: some bars missed, the verdict; anything else is an error
        sys.exit(
            f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-3000:]}{completed.stderr[-3000:]}"
        )
    return elapsed


def scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    from cfcheck.core.keys import ScoreId

    card = json.loads((run_dir / "scorecard.json").read_text())
    return {ScoreId.from_score(s).serialise(): s for s in card["scores"]}


def compare(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> str:
    if set(a) != set(b):
        return f"different scores: {len(set(a) ^ set(b))} keys in only one"
    differing, largest, verdicts = 0, 0.0, []
    for key in a:
        va, vb = a[key].get("value"), b[key].get("value")
        if va != vb:
            differing += 1
            if isinstance(va, float) and isinstance(vb, float) and math.isfinite(va) and math.isfinite(vb):
                largest = max(largest, abs(va - vb) / max(abs(va), abs(vb), 1e-12))
        if a[key].get("verdict") != b[key].get("verdict"):
            verdicts.append(key)
    if not differing:
        return f"identical ({len(a)} scores)"
    text = f"{differing}/{len(a)} values differ (largest relative difference {largest:.1e})"
    return text + (f"; verdicts differ on {verdicts}" if verdicts else "; no verdict differs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--method", default="cfcheck.fixtures.vce.wachter")
    parser.add_argument("--out", type=Path, default=Path("/tmp/cfcheck-sharding"))
    args = parser.parse_args()
    name = args.method.rsplit(".", 1)[-1]
    base = [
        sys.executable,
        "-m",
        "pytest",
        f"--method={args.method}",
        f"--cfcheck-profile={args.profile}",
        "-q",
        "--cfcheck-no-cache",
        "-p",
        "no:cacheprovider",
        "-o",
        "testpaths=suites",
    ]
    folders = {variant: args.out / variant for variant in ("single", "xdist", "shards", "merged")}
    times = {
        "one process (2 torch threads)": run([*base, "-p", "no:xdist", f"--cfcheck-report-dir={folders['single']}"]),
        "-n 2 --dist loadgroup": run(
            [*base, "-n", "2", "--dist", "loadgroup", f"--cfcheck-report-dir={folders['xdist']}"], env_threads=1
        ),
    }
    for shard in (1, 2):
        times[f"shard {shard}/2"] = run(
            [*base, "-p", "no:xdist", f"--cfcheck-shard={shard}/2", f"--cfcheck-report-dir={folders['shards']}"]
        )
    shard_dirs = sorted((folders["shards"]).glob(f"{name}-{args.profile}-shard*of2"))
    times["cfcheck merge"] = run(
        [sys.executable, "-m", "cfcheck.cli", "merge", *map(str, shard_dirs), "--output", str(folders["merged"])]
    )
    print(f"{args.method}, {args.profile} profile, --cfcheck-no-cache\n")
    print("| run | wall time |\n|---|---|")
    for label, seconds in times.items():
        print(f"| {label} | {seconds:.0f} s |")
    single = scores(folders["single"] / f"{name}-{args.profile}")
    xdist = scores(folders["xdist"] / f"{name}-{args.profile}")
    merged = scores(folders["merged"])
    print(f"\n-n 2 vs merged shards: {compare(xdist, merged)}")
    print(f"one process vs -n 2: {compare(single, xdist)}")


if __name__ == "__main__":
    main()
