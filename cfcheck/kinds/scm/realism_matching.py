"""The realism reference of a domain that cannot render images from given parents (a user's domain
of real, attribute-labelled images): real images whose attributes match each counterfactual's.

A bundled procedural domain renders, per counterfactual, fresh real images with exactly its
parents (:func:`cfcheck.kinds.scm.realism.reference_renders`). Real data cannot, so each
counterfactual is given ``copies`` distinct real images of the domain's ``reference`` split (never
trained on, never scored) whose attributes are closest to the counterfactual's parents after the
intervention has propagated: the matched categorical parent (the class the score is conditional on)
always equal; then every other discrete parent equal where the split holds one, and every continuous
parent in the same bin (:meth:`parent_bin`), nearest value first. The images are assigned greedily,
one copy per counterfactual per round in a seeded order, each real image used once, so the reference
and floor sets drawn from them are disjoint as the rendered ones are. How many of them fall in their
counterfactual's exact cell (every parent's bin) is reported with the score.

Per class k of the matched parent, ``copies = min(13, p_k // n_k)`` (13 = a reference of 8 and 5 floor
draws per counterfactual, as rendered; p_k real images of class k, n_k counterfactuals showing it),
and at least 7 (a reference of 2 and the 5 floors): fewer is a :class:`ValueError` saying what to
change (:func:`reference_shortfall`). The domain's load check warns of it for the run's tasks (a
warning, not a failure: the domain's other suites, and other kinds' on the same domain, still run),
and the realism tests skip with it as the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from cfcheck.metrics.reference_sets import FLOOR_DRAWS, REFERENCE_PER_SAMPLE, minimum_pool

__all__ = ["MatchedReference", "match_reference", "reference_shortfall", "short_classes", "shortfall_message"]

#: real images per counterfactual when the split can spare them (a reference of 8 and 5 floor draws)
COPIES = REFERENCE_PER_SAMPLE + FLOOR_DRAWS
#: the fewest that leave a reference of 2 per counterfactual beside the floors
MIN_COPIES = minimum_pool(1)
#: cost of a discrete parent that differs (above any continuous mismatch)
_DISCRETE_MISMATCH = 1000.0
#: weight of the standardised distance of a continuous value inside the bins' distance (nearest first)
_VALUE_WEIGHT = 0.01


@dataclass(frozen=True)
class MatchedReference:
    """Real images matched with counterfactuals.

    Attributes:
        rows: positions in the domain's reference split of the matched real images.
        classes: the class each is scored under (its counterfactual's value of the matched parent, or 0).
        exact: the share whose every parent falls in its counterfactual's bin.
    """

    rows: torch.Tensor
    classes: torch.Tensor
    exact: float


def _pool(domain: Any) -> dict[str, torch.Tensor]:
    split = domain.split_roles["reference"]
    return domain.parents(split, torch.arange(len(domain.split(split).labels)))


def _classes(parents: dict[str, torch.Tensor], match: str | None) -> torch.Tensor:
    n = len(next(iter(parents.values())))
    return parents[match].long() if match is not None else torch.zeros(n, dtype=torch.long)


def short_classes(domain: Any, targets: dict[str, torch.Tensor], match: str | None) -> list[tuple[int, int, int]]:
    """``(k, n_k, p_k)`` for each class k of the matched parent that the reference split holds too few
    real images of for counterfactuals with parents ``targets``: n_k counterfactuals show k, the split
    holds p_k < 7·n_k (:data:`MIN_COPIES`) real images of it."""
    pool = _classes(_pool(domain), match)
    wanted = _classes(targets, match)
    found = [(k, int((wanted == k).sum()), int((pool == k).sum())) for k in wanted.unique().tolist()]
    return [(k, n_k, p_k) for k, n_k, p_k in found if p_k < MIN_COPIES * n_k]


def shortfall_message(domain: Any, short: list[tuple[int, int, int]], match: str | None) -> str | None:
    """What the reference split lacks (None: nothing), naming the domain, the split and its size, each
    short class with the images needed and held, and what to change."""
    if not short:
        return None
    split = domain.split_roles["reference"]
    held = len(domain.split(split).labels)
    lines = [f"{MIN_COPIES * n_k} for {n_k} counterfactuals, it holds {p_k}" for _, n_k, p_k in short]
    if match:
        lines = [f"{match} = {k}: {line}" for (k, _, _), line in zip(short, lines, strict=True)]
    return (
        f"domain {domain.name!r}: realism compares each counterfactual with real images whose attributes match its "
        f"own, at least {MIN_COPIES} per counterfactual (a reference of 2 and {FLOOR_DRAWS} floor draws), from the "
        f"reference split {split!r} ({held} images): {'; '.join(lines)}; give the domain more images, a larger "
        "reference fraction (ImageDomain(fractions=...)), or fewer inputs ([tool.cfcheck.scm] n_inputs)"
    )


def reference_shortfall(domain: Any, targets: dict[str, torch.Tensor], match: str | None) -> str | None:
    """What the reference split lacks for counterfactuals with parents ``targets`` (None: nothing):
    per class k of the matched parent, at least 7·n_k real images (:data:`MIN_COPIES`)."""
    return shortfall_message(domain, short_classes(domain, targets, match), match)


def _cells(domain: Any, parents: dict[str, torch.Tensor]) -> torch.Tensor:
    """N × F: every parent's bin (:meth:`parent_bin`) of each row, in factor order."""
    return torch.stack([domain.parent_bin(name, parents[name]).long() for name in domain.factor_names], 1)


def _costs(domain: Any, targets: dict[str, torch.Tensor], pool: dict[str, torch.Tensor]) -> torch.Tensor:
    """n × p: how far each real image's parents are from each counterfactual's (module docstring)."""
    wanted, held = _cells(domain, targets), _cells(domain, pool)
    cost = torch.zeros(len(wanted), len(held), dtype=torch.float64)
    for column, name in enumerate(domain.factor_names):
        apart = (wanted[:, column, None] - held[None, :, column]).abs().double()
        if name in domain.categorical_factors:
            cost += _DISCRETE_MISMATCH * (apart > 0).double()
            continue
        spread = float(pool[name].double().std()) or 1.0
        cost += apart + _VALUE_WEIGHT * (targets[name].double()[:, None] - pool[name].double()[None]).abs() / spread
    return cost


def match_reference(
    domain: Any, targets: dict[str, torch.Tensor], match: str | None, generator: torch.Generator
) -> MatchedReference:
    """Real images of the reference split matched with counterfactuals of parents ``targets`` (see the
    module docstring), copy-major within each class.

    Raises:
        ValueError: where the split holds too few real images of a class (:func:`reference_shortfall`).
    """
    shortfall = reference_shortfall(domain, targets, match)
    if shortfall is not None:
        raise ValueError(shortfall)
    pool = _pool(domain)
    cost = _costs(domain, targets, pool)
    cost += 1e-9 * torch.rand(cost.shape, generator=generator, dtype=torch.float64)  # ties: a seeded choice
    wanted, held = _classes(targets, match), _classes(pool, match)
    cost[wanted[:, None] != held[None]] = torch.inf  # the matched class is never crossed
    rows: list[int] = []
    chosen_for: list[int] = []
    for k in wanted.unique().tolist():
        members = torch.nonzero(wanted == k).flatten()
        copies = min(COPIES, int((held == k).sum()) // len(members))
        free = torch.ones(cost.shape[1], dtype=torch.bool)
        order = members[torch.randperm(len(members), generator=generator)].tolist()
        for _ in range(copies):
            for i in order:
                row = int(torch.where(free, cost[i], torch.inf).argmin())
                free[row] = False
                rows.append(row)
                chosen_for.append(i)
    index, owner = torch.tensor(rows, dtype=torch.long), torch.tensor(chosen_for, dtype=torch.long)
    same = (_cells(domain, targets)[owner] == _cells(domain, pool)[index]).all(1)
    return MatchedReference(index, wanted[owner], float(same.double().mean()) if len(index) else 0.0)
