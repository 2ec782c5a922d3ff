"""Calibration: run every bundled control through the suites and tabulate what they reach.

    cfcheck calibrate [--profile quick] [--out reports/published] [--methods truth identity ...]

Each control is one ``pytest --method=cfcheck.fixtures.<name>`` run (one CPU thread, so runs
are comparable). Two tables come out, both in Markdown:

- the **verdict matrix**: per control and suite, how many scores passed, failed or were
  inconclusive, and whether the suite passed as a whole;
- the **calibration table**: per metric with a bar, the range of values (over tasks) each
  control reached, beside the bar. A bar is earned when it sits between what the positive
  controls reach and what the negative controls reach; the metric cards state the rationale.

The README's tables are this command's output; tests/test_verdicts.py asserts the verdicts.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The bundled controls and the baseline, and the suites each is expected to pass (+) or fail (−).
CONTROLS: dict[str, str] = {
    "truth": "+validity +closeness +realism −random_classifier",
    "truth_rejecting": "+validity +closeness +realism +random_classifier",
    "random_target": "+validity −closeness +realism −random_classifier",
    "nearest": "+validity −closeness",
    "identity": "−validity +closeness −realism −random_classifier",
    "noise": "−validity −closeness −realism",
    "pgd": "−validity",
    "wachter": "(baseline)",
}
SUITES = ("validity", "closeness", "realism", "random_classifier")


def run_control(name: str, profile: str, out: Path) -> tuple[dict[str, Any], float]:
    """One conformance run of ``cfcheck.fixtures.<name>``; its scorecard and wall time."""
    started = time.monotonic()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, "-m", "pytest", f"--method=cfcheck.fixtures.{name}", f"--cfcheck-profile={profile}",
         f"--cfcheck-report-dir={out}", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=",
         "-p", "no:xdist"],
        check=False, capture_output=True, env=env,
    )
    elapsed = time.monotonic() - started
    path = out / f"{name}-{profile}" / "scorecard.json"
    return json.loads(path.read_text()), elapsed


def suite_verdicts(scorecard: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Suite → verdict → count (scores without a bar are left out)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for score in scorecard["scores"]:
        if score.get("verdict"):
            counts[score["suite"]][score["verdict"]] += 1
    return counts


def suite_summary(counts: dict[str, int]) -> str:
    """"PASS 96/96", "FAIL 40/96 (3 inconclusive)" …: a suite passes when every bar passes."""
    total = sum(counts.values())
    if not total:
        return "-"
    passed = counts.get("pass", 0)
    text = f"{'PASS' if passed == total else 'FAIL'} {passed}/{total}"
    if counts.get("inconclusive"):
        text += f" ({counts['inconclusive']} inconcl.)"
    return text


def metric_ranges(scorecard: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Metric key (variants merged) → (min, max) value over tasks."""
    values: dict[str, list[float]] = defaultdict(list)
    for score in scorecard["scores"]:
        value = score.get("value")
        if value is not None and math.isfinite(value):
            values[score["metric"].split(":", 1)[0]].append(value)
    return {key: (min(v), max(v)) for key, v in values.items()}


def _range(span: tuple[float, float] | None) -> str:
    if span is None:
        return "-"
    low, high = span
    return f"{low:.3g}" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}–{high:.3g}"


def render(results: dict[str, tuple[dict[str, Any], float]], profile: str) -> str:
    from cfcheck.metrics.cards import CARDS

    lines = [f"Verdict matrix ({profile} profile; passed/total bars per suite)", ""]
    header = ["control", "expected", *SUITES, "s"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, (scorecard, seconds) in results.items():
        counts = suite_verdicts(scorecard)
        cells = [suite_summary(counts.get(suite, {})) for suite in SUITES]
        lines.append("| " + " | ".join([name, CONTROLS.get(name, "-"), *cells, f"{seconds:.0f}"]) + " |")
    lines += ["", f"Calibration table (value range over tasks; {profile} profile)", ""]
    header = ["metric", "bar", *results]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    ranges = {name: metric_ranges(scorecard) for name, (scorecard, _) in results.items()}
    for key, card in CARDS.items():
        if not any(key in r for r in ranges.values()):
            continue
        bar = card.bar_for(profile)
        cells = [_range(ranges[name].get(key)) for name in results]
        lines.append("| " + " | ".join([key, bar.describe() if bar else "none", *cells]) + " |")
    return "\n".join(lines) + "\n"


def _run_seconds(scorecard: dict[str, Any]) -> float:
    """Wall time of a stored run, from its provenance (to the second)."""
    from datetime import datetime

    provenance = scorecard["provenance"]
    started, finished = (datetime.fromisoformat(provenance[k]) for k in ("started", "finished"))
    return (finished - started).total_seconds()


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="cfcheck calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--out", type=Path, default=Path("reports/published"))
    parser.add_argument("--methods", nargs="*", default=list(CONTROLS))
    parser.add_argument("--reuse", action="store_true", help="tabulate existing scorecards under --out")
    args = parser.parse_args(argv)
    results = {}
    for name in args.methods:
        if args.reuse:
            scorecard = json.loads((args.out / f"{name}-{args.profile}" / "scorecard.json").read_text())
            results[name] = (scorecard, _run_seconds(scorecard))
        else:
            results[name] = run_control(name, args.profile, args.out)
            print(f"{name}: {results[name][1]:.0f} s", file=sys.stderr)
    print(render(results, args.profile))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
