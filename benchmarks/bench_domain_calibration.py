"""Time of `cfcheck calibrate --domain` on a user's domain of about 2,000 images, and what sizing the
adversarial control adds.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_domain_calibration.py [--scene shapes] [--profile quick]
                                                                     [--seeds 0 1 2] [--no-positive] [--jobs 1]

The domain is one of the project's test domains (``tests/own_domains``: ``shapes`` is 2,040 RGB 32×32
images of three classes, a CNN, three oracles of other architectures and an embedding, built once per
machine and cached), copied into a temporary folder, as a user lays it out: an ``ImageDomain`` over a
memory-mapped array with a ``ModelStore``. Its rendered true counterfactual is named as the user's
positive control (``--positive``; ``--no-positive`` calibrates without one, so the distances get a
comparison bar). The calibration runs in this process on one thread (each control's run is its own
one-thread process, as always), and the script prints, one figure per line:

- the total wall seconds of the calibration (load check, the budget search, every control at every
  seed, the bars written), and the seconds of the search for the adversarial budget (what it adds);
- each control's seconds summed over the seeds;
- the budget found (ε and how many /255), the share of inputs it reaches, and the search's trials;
- how many scores got a bar, by how they were placed (80 % share, between the controls, comparison).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", default="shapes", help="the test domain (tests/own_domains/scenes.py)")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--no-positive", action="store_true", help="calibrate without the rendered truth")
    parser.add_argument("--jobs", type=int, default=1, help="control runs at once (each on one thread)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sys.path.insert(0, str(REPO))
    from cfcheck.kinds.vce.calibration import calibrate_domain
    from tests.own_domains.build import materialise

    started = time.monotonic()
    domain = materialise(args.scene)  # built once per machine (untimed after the first run)
    images = len(np.load(domain.folder / "images.labels.npy"))
    print(f"domain {domain.domain_name}: {images} images, ready in {time.monotonic() - started:.0f} s")
    with tempfile.TemporaryDirectory() as scratch:
        copy = materialise(args.scene, scratch)
        positives = [] if args.no_positive else [copy.method]
        started = time.monotonic()
        outcome = calibrate_domain(
            copy.spec, args.profile, Path(scratch) / "runs", None, args.seeds, positives, args.jobs
        )
        total = time.monotonic() - started
    seconds = outcome["seconds"]
    budget = outcome["budget"]
    runs = f"{args.jobs} runs at a time" if args.jobs > 1 else "one run at a time"
    print(f"calibration, {len(args.seeds)} seeds, {args.profile} profile, one thread per run, {runs}: {total:.0f} s")
    print(f"  sizing the adversarial control (ε search): {seconds['pgd budget search']:.1f} s")
    for name, spent in seconds.items():
        if name != "pgd budget search":
            print(f"  {name}: {spent:.1f} s over {len(args.seeds)} seeds")
    print(f"ε = {budget.eps:.4f} ({budget.eps * 255:.2f}/255), reaching {budget.reached:.0%} of {budget.inputs} inputs")
    print("  trials: " + ", ".join(f"{eps * 255:.2f}/255 → {rate:.0%}" for eps, rate in budget.trials))
    bases = Counter(p.basis for p in outcome["placements"].values() if p.bar is not None)
    unbarred = sum(1 for p in outcome["placements"].values() if p.bar is None)
    print(
        f"bars: {sum(bases.values())} ({', '.join(f'{n} {b}' for b, n in sorted(bases.items()))}); {unbarred} without"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
