"""Throughput of the morpho domain: factor sampling, rendering and measurement (images/s).

    /work/venv/bin/python benchmarks/bench_morpho.py [--n 10000] [--repeats 3]

Reports the best of ``--repeats`` runs (other processes on a shared machine only slow runs down).
The one-off glyph-bank build is timed separately since every process pays it once.
"""

from __future__ import annotations

import argparse
import time

import torch

from cfcheck.domains.morpho import measure_intensity, measure_thickness, render, sample_factors
from cfcheck.domains.morpho.fonts import glyph_bank


def _best_of(repeats: int, work) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="images per run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    glyph_bank()
    print(f"glyph bank build (once per process): {time.perf_counter() - start:.2f} s")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, n = {args.n}")

    factors = sample_factors(args.n, 0)
    images = render(factors)
    timings = {
        "sample_factors": _best_of(args.repeats, lambda: sample_factors(args.n, 0)),
        "render": _best_of(args.repeats, lambda: render(factors)),
        "measure_thickness": _best_of(args.repeats, lambda: measure_thickness(images)),
        "measure_intensity": _best_of(args.repeats, lambda: measure_intensity(images)),
    }
    for name, seconds in timings.items():
        print(f"{name:>18}: {seconds:7.3f} s  {args.n / seconds:12,.0f} img/s")
    total = timings["sample_factors"] + timings["render"]
    print(f"{'sample + render':>18}: {total:7.3f} s  {args.n / total:12,.0f} img/s")


if __name__ == "__main__":
    main()
