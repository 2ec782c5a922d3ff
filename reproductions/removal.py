"""Park et al.'s (2023) removal comparisons, outside pytest: every strategy for several
attribution methods on the same inputs, through the same engine the suites use.

``python -m reproductions.removal --domain D`` (from the repository's root) prints the tables
README shows: on a domain with a true class feature, that feature (μ_target − μ_other for a
Gaussian mixture) degraded by noise of ratio 0, 0.5, 1, 2 and 4, and the random attribution; on
another domain, the reference attribution methods compared. ``tests/test_removal_findings.py``
asserts the paper's qualitative findings on these tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from cfcheck.kinds.attribution.local_run import LocalRun, removal_data
from cfcheck.kinds.attribution.removal import STRATEGIES, removal_curve
from cfcheck.kinds.attribution.section import SECTION_DEFAULTS

__all__ = ["default_methods", "removal_table"]


def removal_table(
    run: LocalRun,
    domain: Any,
    model_name: str,
    methods: Mapping[str, Any],
    strategies: Sequence[tuple[str, str]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, float]]:
    """Mean area of every (strategy, order) curve for every method: method → "roar:morf" → area."""
    from cfcheck.metrics.removal_curves import curve_area

    pairs = strategies or [(s, o) for s, orders in STRATEGIES.items() for o in orders]
    table: dict[str, dict[str, float]] = {}
    for name, method in methods.items():
        started = time.perf_counter()
        data = removal_data(run, domain, model_name, method)
        table[name] = {}
        for strategy, order in pairs:
            curve = removal_curve(run, data, strategy, order)
            table[name][f"{strategy}:{order}"] = float(curve_area(curve.outcomes, curve.levels).mean())
        log(f"{name}: {table[name]} ({time.perf_counter() - started:.0f} s)")
    return table


def default_methods(domain: Any) -> dict[str, Any]:
    """A domain (the object) with a ground-truth feature: that feature at Park et al.'s noise ratios
    and random; any other: the five reference methods."""
    from cfcheck.kinds.attribution.capabilities import ClassFeature
    from cfcheck.kinds.attribution.methods import saliency as A

    if isinstance(domain, ClassFeature):
        truth = A.TrueFeature(domain)
        return {
            **{f"true feature + noise {r:g}": A.NoisyAttribution(truth, r) for r in (0.0, 0.5, 1.0, 2.0, 4.0)},
            "random": A.RandomAttribution(),
        }
    return {
        "gradient": A.Gradient(),
        "input×gradient": A.InputTimesGradient(),
        "smoothgrad": A.SmoothGrad(),
        "integrated gradients": A.IntegratedGradients(),
        "random": A.RandomAttribution(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", required=True)
    parser.add_argument("--model", default=None, help="the explained model (default: the domain's first)")
    parser.add_argument("--profile", default="quick", choices=sorted(SECTION_DEFAULTS))
    parser.add_argument("--removal-train", type=int, default=None)
    parser.add_argument("--removal-test", type=int, default=None)
    parser.add_argument(
        "--goar-levels",
        type=int,
        default=None,
        metavar="K",
        help="K evenly spaced GOAR levels 1/K .. 1 (default: the domain's own, e.g. 10 for Fig. 3's sweep)",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    section = SECTION_DEFAULTS[args.profile]
    changes = {
        key: value
        for key, value in (("removal_train", args.removal_train), ("removal_test", args.removal_test))
        if value is not None
    }
    if args.goar_levels:
        changes["goar_levels"] = tuple(round((i + 1) / args.goar_levels, 6) for i in range(args.goar_levels))
    section = dataclasses.replace(section, **changes)
    run = LocalRun(section)
    domain = run.domain(args.domain)
    model = args.model or domain.model_roles["explained"][0]
    table = removal_table(run, domain, model, default_methods(domain))
    columns = list(next(iter(table.values())))
    print(f"\n| method ({args.domain}/{model}, {args.profile}) | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in columns) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
