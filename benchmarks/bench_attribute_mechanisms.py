"""What fitting a user's attribute mechanisms costs: cfcheck's flows and classifiers on a table.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_attribute_mechanisms.py [--rows 2000] [--repeats 1]

Draws ``--rows`` rows of four attributes from a known SCM — a continuous root ``a``, a categorical
root ``site`` of four values, a continuous child ``m`` of ``a`` and ``site`` (a residual spline flow)
and a binary child ``b`` of ``m`` (a classifier) — and prints, one figure per line: the seconds
:func:`cfcheck.domains.attributes_mechanisms.fit_mechanisms` takes to fit them (the derived-data
cache starts empty; with ``--repeats`` > 1, the fastest of that many fits with the cache off), the
seconds a second domain takes to read them back from the cache, and one propagation of a do() on
every row.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    import numpy as np
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CFCHECK_CACHE_DIR"] = folder
        from cfcheck.domains.attributes import Attributes, binary, categorical, continuous
        from cfcheck.domains.data import ArraySource, ImageDomain

        rng = np.random.default_rng(0)
        n = args.rows
        a, site = rng.standard_normal(n), rng.integers(0, 4, n)
        m = 1.5 * a + np.array([0.0, 1.0, -1.0, 2.0])[site] + 0.5 * rng.standard_normal(n)
        b = (rng.random(n) < 1 / (1 + np.exp(-2 * m))).astype(int)
        table = {"a": a, "site": site, "m": m, "b": b}
        images = ArraySource(rng.integers(0, 256, (n, 1, 2, 2), dtype=np.uint8), np.arange(n) % 2)

        def domain() -> ImageDomain:
            declared = [continuous("a"), categorical("site", count=4), continuous("m"), binary("b")]
            attributes = Attributes(declared, table=table, graph={"m": ("a", "site"), "b": ("m",)})
            return ImageDomain("bench", images, root=folder, model_roles={}, attributes=attributes)

        timings = []
        for repeat in range(args.repeats):
            if repeat:
                os.environ["CFCHECK_NO_DERIVED_CACHE"] = "1"
            started = time.perf_counter()
            domain()._scm.mechanisms  # noqa: B018 - fitted on first use
            timings.append(time.perf_counter() - started)
        os.environ.pop("CFCHECK_NO_DERIVED_CACHE", None)
        print(f"fit: {min(timings):.2f} s for {n} rows, 4 attributes (2 fitted: a flow and a classifier)")
        started = time.perf_counter()
        again = domain()
        again._scm.mechanisms  # noqa: B018
        print(f"again, a fresh domain (cached): {time.perf_counter() - started:.3f} s")
        index = torch.arange(len(again.split("scored")))
        parents = again.parents("scored", index)
        new = again.sample_intervention("a", parents, torch.Generator().manual_seed(0))
        started = time.perf_counter()
        again.counterfactual_parents("scored", index, {"a": new})
        print(f"propagate do(a) on {len(index)} scored images: {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
