"""Time per input of the SCM suites on a user's attribute-labelled domain of 2,000 images, quick profile.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_scm_user_domain.py [--method renderer] [--profile quick]

The domain is the project's ``scm_shapes`` test domain (``tests/own_domains/scm_shapes.py``: 2,000 grey
28×28 shapes with a categorical type, a size and a brightness caused by the size, declared as a user
declares them with ``ImageDomain(attributes=...)``; two anti-causal predictors, an embedding and a
minimality VAE in a ``ModelStore``), built once per machine and cached. The script runs ``pytest
--method=...`` on it as a user would, in a temporary folder, as its own process on one thread, with the
generation cache and cfcheck's on-disk memo off (``--cfcheck-no-cache``, an empty ``CFCHECK_CACHE_DIR``),
and prints, one figure per line:

- the wall seconds of the whole run (start-up, every SCM suite on every task, the scorecard written);
- how many inputs the run scored (tasks × ``n_inputs``) and the wall seconds per input;
- the seconds inside the method's calls and the evaluation's seconds per task (the scorecard's costs).

``--method`` is one of the test's generators (``renderer``, ``random_real``, ``scramble``: the adapters of
``tests/own_domains/scm_adapters``) or any ``--method`` spec (``cfcheck.fixtures.scm.identity``).
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

REPO = Path(__file__).resolve().parents[1]
ADAPTERS = REPO / "tests" / "own_domains" / "scm_adapters"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="renderer", help="renderer, random_real, scramble, or a --method spec")
    parser.add_argument("--profile", default="quick")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from tests.own_domains import scm_shapes

    started = time.monotonic()
    folder = scm_shapes.build()  # built once per machine (untimed after the first run)
    print(f"domain {scm_shapes.DOMAIN_NAME}: {scm_shapes.N_IMAGES} images, ready in {time.monotonic() - started:.1f} s")
    method = str(ADAPTERS / f"{args.method}.py") if (ADAPTERS / f"{args.method}.py").is_file() else args.method
    with tempfile.TemporaryDirectory(prefix="cfcheck-bench-scm-") as scratch:
        work = Path(scratch)
        (work / "pyproject.toml").write_text(
            f'[tool.cfcheck]\ndomains = ["{folder / "domain.py"}:make_domain"]\nprofile = "{args.profile}"\n'
        )
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "CFCHECK_CACHE_DIR": str(work / "cache")}
        command = [sys.executable, "-m", "pytest", f"--method={method}", "--cfcheck-no-cache", "-p", "no:randomly"]
        command += ["-p", "no:xdist", "-q"]
        started = time.monotonic()
        run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        if run.returncode != 0:
            print(run.stdout[-4000:], run.stderr[-2000:])
            return run.returncode
        reports = list((work / "reports").glob(f"*-{args.profile}/scorecard.json"))
        costs = json.loads(reports[0].read_text())["costs"]
    inputs = sum(int(cost["inputs"]) for cost in costs.values())
    print(f"run_seconds: {seconds:.1f} s ({len(costs)} tasks, profile {args.profile}, method {args.method})")
    print(f"inputs_scored: {inputs}")
    print(f"seconds_per_input: {seconds / inputs:.4f} s")
    for task, cost in sorted(costs.items()):
        print(
            f"{task}: method {cost['method_seconds']:.2f} s, evaluation {cost['scoring_seconds']:.2f} s, "
            f"peak RSS {cost['peak_rss_mb']:.0f} MB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
