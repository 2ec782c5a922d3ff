"""cfcheck's own share of a conformance run's wall time (issue 7's "≤ 10% of a quick Wachter run").

Run:  python benchmarks/bench_overhead.py [--method cfcheck.fixtures.vce.wachter] [--profile quick] [--threads 1 default]

For each thread setting, one conformance run in a fresh process with the generation cache off
(the method is called for every task) and the derived data as a machine has it after its first
run (an untimed run first fills it, unless ``--no-warm-up``). The wall time is measured around the process; the method's seconds are the time inside its
own calls (the scorecard's ``costs``: generation plus the calls its tests make, e.g. the
determinism check). Everything else is charged to cfcheck: start-up, collection, output checks,
scoring, example grids, the scorecard.

One more figure is printed because the first accounting charges it to cfcheck although a
standalone run of the method pays it too: importing the method's adapter module, measured in a
fresh process (``import`` of the module alone). For a torch method that import is mostly
torch's, which cfcheck's plugin defers until a method is loaded.

"default" threads means what a user gets without OMP_NUM_THREADS: cfcheck gives a single
process the cores the load average leaves free (cfcheck.core.threads).

Python's bytecode cache is on in the measured processes, as Python has it by default (the
warm-up run writes it, with the assertion-rewritten modules pytest keeps), even where the
environment sets PYTHONDONTWRITEBYTECODE; ``--no-bytecode-cache`` keeps the environment's setting,
under which every run compiles cfcheck's modules and rewrites their asserts again.
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


def child_environment(threads: str, bytecode_cache: bool) -> dict[str, str]:
    """The measured process's environment: its torch threads and whether it may write bytecode."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if threads != "default":
        env["OMP_NUM_THREADS"] = threads
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def conformance_run(method: str, profile: str, threads: str, bytecode_cache: bool = True) -> dict[str, float]:
    """Wall seconds, the method's seconds and cfcheck's, for one run in a fresh process."""
    env = child_environment(threads, bytecode_cache)
    with tempfile.TemporaryDirectory() as reports:
        command = [
            sys.executable,
            "-m",
            "pytest",
            f"--method={method}",
            f"--cfcheck-profile={profile}",
            "-o",
            "testpaths=suites",
            "--cfcheck-no-cache",
            "-q",
            "-p",
            "no:randomly",
            f"--cfcheck-report-dir={reports}",
        ]
        started = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - started
        scorecards = list(Path(reports).glob("*/scorecard.json"))
        if len(scorecards) != 1:
            sys.exit(f"expected one scorecard under {reports}, found {len(scorecards)}")
        costs = json.loads(scorecards[0].read_text())["costs"].values()
    method_seconds = sum(c.get("method_seconds", 0.0) + c.get("method_seconds_in_tests", 0.0) for c in costs)
    scoring = sum(c.get("scoring_seconds", 0.0) for c in costs)
    return {"wall": wall, "method": method_seconds, "scoring": scoring}


def import_seconds(method: str, threads: str, bytecode_cache: bool = True) -> float:
    """Seconds a fresh process takes to import the method's adapter module (torch included)."""
    env = child_environment(threads, bytecode_cache)
    code = (
        "import importlib, time; t = time.perf_counter(); importlib.import_module({!r}); "
        "print(time.perf_counter() - t)".format(method.split(":")[0])
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="cfcheck.fixtures.vce.wachter")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--threads", nargs="+", default=["1", "default"])
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="skip the untimed first run that fills the derived data (reference terms, floors)",
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep the environment's PYTHONDONTWRITEBYTECODE (by default the measured runs may cache bytecode)",
    )
    args = parser.parse_args()
    cache = not args.no_bytecode_cache
    print(
        f"{args.method}, profile {args.profile}, generation cache off, Python's bytecode cache "
        f"{'on' if cache or not os.environ.get('PYTHONDONTWRITEBYTECODE') else 'off (PYTHONDONTWRITEBYTECODE)'}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if not args.no_warm_up:  # the target is stated for a machine whose derived data is warm
        conformance_run(args.method, args.profile, args.threads[0], cache)
    for threads in args.threads:
        run = conformance_run(args.method, args.profile, threads, cache)
        imported = import_seconds(args.method, threads, cache)
        own = run["wall"] - run["method"]
        print(
            f"\nthreads {threads}: wall {run['wall']:.1f} s, the method's calls {run['method']:.1f} s, "
            f"cfcheck {own:.1f} s = {own / run['wall']:.1%} (scoring {run['scoring']:.1f} s = "
            f"{run['scoring'] / run['wall']:.1%})"
        )
        charged = own - imported
        print(
            f"  importing the method's module (torch included) {imported:.2f} s; charged to the method, "
            f"cfcheck's share is {charged / run['wall']:.1%}"
        )
        # cfcheck's share c / (c + m) <= 10% means c <= m / 9, with the import on the method's side
        budget = (run["method"] + imported) / 9
        verdict = "met" if charged <= budget else f"missed by {charged - budget:.1f} s"
        print(
            f"  the <= 10% target allows cfcheck {budget:.1f} s: {verdict} (scoring {run['scoring']:.1f} s, "
            f"the rest {charged - run['scoring']:.1f} s: start-up, collection, output checks, example grids, "
            "the scorecard)"
        )


if __name__ == "__main__":
    main()
