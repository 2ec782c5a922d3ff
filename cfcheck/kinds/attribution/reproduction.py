"""Park et al.'s (2023) removal comparisons, outside pytest: every strategy for several
attribution methods on the same inputs, through the same engine the suites use.

``python -m cfcheck.kinds.attribution.reproduction --domain D`` prints the tables README shows:
on a domain with a true class feature, that feature (μ_target − μ_other for a Gaussian mixture)
degraded by noise of ratio 0, 0.5, 1, 2 and 4, and the random attribution; on another domain,
the reference attribution methods compared.
The project's tests assert the paper's qualitative findings on these tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from cfcheck.kinds.attribution.removal import REMOVAL_SEED, STRATEGIES, RemovalData, removal_curve
from cfcheck.kinds.attribution.section import SECTION_DEFAULTS, AttributionSection
from cfcheck.kinds.base import RunResources

__all__ = ["LocalRun", "attribute_batched", "default_methods", "removal_table"]


class LocalRun(RunResources):
    """The part of a cfcheck session the removal engine uses, without pytest."""

    def __init__(self, section: AttributionSection, device: str = "cpu", seed: int = 0,
                 domains: Sequence[Any] = ()) -> None:
        self.device, self.seed = torch.device(device), seed
        self._section, self._memo, self._zoos = section, {}, {}
        self._domains = {domain.name: domain for domain in domains}  # others resolve by registered name

    @property
    def profile(self) -> Any:
        section = self._section

        class _Profile:
            name = "local"

            @staticmethod
            def section(kind: str) -> AttributionSection:
                return section

        return _Profile()

    @property
    def seeds(self) -> tuple[int, ...]:
        """The task seeds (:class:`cfcheck.kinds.base.Run`): the one seed of the offline run."""
        return (self.seed,)



def attribute_batched(method: Any, x: torch.Tensor, model: torch.nn.Module, target: torch.Tensor,
                      seed: int) -> torch.Tensor:
    """``method.attribute`` on ``x`` in batches of 250, detached; a method that takes a
    ``generator`` gets one seeded ``seed`` + the batch's first index."""
    import inspect

    takes_generator = "generator" in inspect.signature(method.attribute).parameters
    parts = []
    for start in range(0, len(x), 250):
        part = slice(start, start + 250)
        kwargs = {"generator": torch.Generator().manual_seed(seed + start)} if takes_generator else {}
        parts.append(method.attribute(x[part], model, target[part], **kwargs).detach())
    return torch.cat(parts)


def removal_data(run: LocalRun, domain: Any, model_name: str, method: Any, seed: int = 0) -> RemovalData:
    """Training and scored inputs of ``domain`` (the object) as the removal tasks draw them,
    attributed by ``method``."""
    section = run.profile.section("attribution")
    model = run.zoo(domain)[model_name]
    parts = []
    for split_role, n, offset in (("train", section.removal_train, 6), ("scored", section.removal_test, 7)):
        data = domain.split(domain.split_roles[split_role])
        generator = torch.Generator().manual_seed(10_007 * seed + offset)
        index = torch.randperm(len(data.labels), generator=generator)[:min(n, len(data.labels))].sort().values
        x = data.images[index].clone()
        target = run.zoo(domain).logits(model_name, x).argmax(1)
        parts += [x, data.labels[index], attribute_batched(method, x, model, target, REMOVAL_SEED + offset)]
    return RemovalData(domain, model_name, *parts)


def removal_table(run: LocalRun, domain: Any, model_name: str, methods: Mapping[str, Any],
                  strategies: Sequence[tuple[str, str]] | None = None, log: Callable[[str], None] = print,
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
    from cfcheck.methods import attributions as A

    if isinstance(domain, ClassFeature):
        truth = A.TrueFeature(domain)
        return {**{f"true feature + noise {r:g}": A.NoisyAttribution(truth, r) for r in (0.0, 0.5, 1.0, 2.0, 4.0)},
                "random": A.RandomAttribution()}
    return {"gradient": A.Gradient(), "input×gradient": A.InputTimesGradient(), "smoothgrad": A.SmoothGrad(),
            "integrated gradients": A.IntegratedGradients(), "random": A.RandomAttribution()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", required=True)
    parser.add_argument("--model", default=None, help="the explained model (default: the domain's first)")
    parser.add_argument("--profile", default="quick", choices=sorted(SECTION_DEFAULTS))
    parser.add_argument("--removal-train", type=int, default=None)
    parser.add_argument("--removal-test", type=int, default=None)
    parser.add_argument("--goar-levels", type=int, default=None, metavar="K",
                        help="K evenly spaced GOAR levels 1/K .. 1 (default: the domain's own, e.g. 10 for Fig. 3's sweep)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    section = SECTION_DEFAULTS[args.profile]
    changes = {key: value for key, value in (("removal_train", args.removal_train),
                                             ("removal_test", args.removal_test)) if value is not None}
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
