"""Run every bundled control and baseline through the suites and print the verdict matrix.

    python benchmarks/verdict_matrix.py [--profile quick] [--out reports/published]

For each method: one pytest run (``--method=cfcheck.fixtures.<name>``); the table shows, per
suite, how many scores passed their threshold, and the mean value of the headline metrics.
The README's verdict matrix is this script's output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

METHODS = ("identity", "noise", "pgd", "nearest", "wachter")
HEADLINE = (
    "target_accuracy",
    "committee_oracle_target_accuracy",
    "perceptual_distance",
    "d2",
    "fid_target",
    "ota_gain",
    "randomisation_similarity",
)
SUITES = ("contract", "validity", "closeness", "realism", "random_classifier")


def run(method: str, profile: str, out: Path) -> tuple[dict, float]:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "pytest", f"--method=cfcheck.fixtures.{method}", f"--cfcheck-profile={profile}",
         f"--cfcheck-report-dir={out}", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts="],
        check=False, capture_output=True,
    )
    elapsed = time.monotonic() - started
    return json.loads((out / f"{method}-{profile}" / "scorecard.json").read_text()), elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", type=Path, default=Path("reports/published"))
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    args = parser.parse_args()
    rows = []
    for method in args.methods:
        scorecard, elapsed = run(method, args.profile, args.out)
        passed, total = defaultdict(int), defaultdict(int)
        values = defaultdict(list)
        for score in scorecard["scores"]:
            if score["passed"] is not None:
                total[score["suite"]] += 1
                passed[score["suite"]] += bool(score["passed"])
            if score["value"] is not None:
                values[score["metric"]].append(score["value"])
        verdicts = [
            ("PASS" if passed[s] == total[s] else "FAIL") + f" {passed[s]}/{total[s]}" if total[s] else "-"
            for s in SUITES[1:]
        ]
        means = [f"{sum(values[m]) / len(values[m]):.3g}" if values[m] else "-" for m in HEADLINE]
        rows.append([method, *verdicts, *means, f"{elapsed:.0f}"])
        print(f"{method}: done in {elapsed:.0f} s", file=sys.stderr)
    header = ["method", *SUITES[1:], *HEADLINE, "seconds"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
