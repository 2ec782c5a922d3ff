"""The adversarial control's budget, sized to a domain by search.

The calibration's adversarial control is a targeted L∞ PGD attack on the explained classifier: an
imperceptible change that reaches the target on that classifier and that the oracles, trained
independently, should not follow. A fixed budget cannot be that on every domain: one that is
invisible on one domain paints visible shapes on another. :func:`find_pgd_budget` searches the
smallest budget at which the attack reaches the target for :data:`REACH` (90 %) of the inputs, on
the domain's never-scored ``selection`` split, over every explained classifier: ε doubles from
1/255 until it reaches them (capped at :data:`MAX_EPS`, 0.15), then :data:`BISECTIONS` bisection
steps between the last budget that did not and the first that did. Each trial runs the attack the
control runs (40 steps of 2.5·ε/40 from a random start in the ball; seeded), on a seeded draw of
inputs, each sent to a random other class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["BISECTIONS", "MAX_EPS", "MIN_EPS", "REACH", "STEPS", "BudgetSearch", "find_pgd_budget", "reach_rate"]

#: the share of inputs the attack must send to their target on the explained classifier
REACH = 0.9
#: the search's first budget and its cap (the budget the bundled domains' control uses)
MIN_EPS, MAX_EPS = 1 / 255, 0.15
#: signed-gradient steps of the attack (its step size is 2.5·ε / STEPS)
STEPS = 40
#: bisection steps after the doubling has bracketed the budget
BISECTIONS = 3
#: inputs of the selection split the search attacks
INPUTS = 200


@dataclass(frozen=True)
class BudgetSearch:
    """What the search found.

    Attributes:
        eps: the budget the control runs at (L∞, on the [0, 1] pixel scale).
        reached: the share of inputs the attack sent to their target at ``eps`` (worst classifier).
        trials: (ε, share reached) of every budget tried, in order.
        inputs: how many inputs of the split were attacked.
        split: the split they came from.
        capped: True where even :data:`MAX_EPS` did not reach :data:`REACH`.
    """

    eps: float
    reached: float
    trials: list[tuple[float, float]] = field(default_factory=list)
    inputs: int = 0
    split: str = "selection"
    capped: bool = False

    @property
    def how(self) -> str:
        """How the budget was chosen, in one sentence (the bars file and the rationales quote it)."""
        tried = ", ".join(f"{eps * 255:.3g}/255 → {rate:.0%}" for eps, rate in self.trials)
        found = (
            f"even the cap {MAX_EPS:g} reached only {self.reached:.0%}: the control runs at the cap"
            if self.capped
            else f"the smallest budget found that reaches {REACH:.0%} is ε = {self.eps:.4g} ({self.eps * 255:.3g}/255)"
        )
        return (
            f"targeted L∞ PGD on the explained classifier, {STEPS} steps of 2.5·ε/{STEPS} from a random start; ε "
            f"searched on {self.inputs} inputs of the never-scored {self.split!r} split (each sent to a random "
            f"other class), doubling from 1/255 and then {BISECTIONS} bisection steps: {tried}; {found}"
        )

    @property
    def short(self) -> str:
        """The budget in a clause (the oracle-validity bars' rationales end with it)."""
        rule = (
            f"the cap, where no budget reached the target on {REACH:.0%} of the inputs"
            if self.capped
            else f"the smallest budget that reaches the target on {REACH:.0%} of the {self.split!r} split's inputs"
        )
        return f"pgd ran at ε = {self.eps:.4g} ({self.eps * 255:.3g}/255), {rule} (controls.vce.pgd in the bars file)"

    def describe(self) -> dict[str, Any]:
        """The bars file's record of the control's budget."""
        return {
            "eps": self.eps,
            "eps_255": round(self.eps * 255, 4),
            "steps": STEPS,
            "step_size": 2.5 * self.eps / STEPS,
            "reached": self.reached,
            "required": REACH,
            "search": [[eps, rate] for eps, rate in self.trials],
            "inputs": self.inputs,
            "split": self.split,
            "capped": self.capped,
            "chosen_by": self.how,
        }


def reach_rate(
    classifier: torch.nn.Module, images: torch.Tensor, targets: torch.Tensor, eps: float, seed: int = 0
) -> float:
    """The share of ``images`` a targeted L∞ PGD of budget ``eps`` (the control's attack) sends to
    ``targets`` on ``classifier``.

    Args:
        classifier: the explained classifier (logits N×K).
        images: N×C×H×W in [0, 1].
        targets: int64 N.
        eps: the L∞ budget (> 0).
        seed: the seed of the attack's random start.

    Returns:
        A share in [0, 1].
    """
    from cfcheck.models.classifiers.adversarial import pgd_attack

    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise ValueError(f"`eps` must be a positive number, got {eps!r}")
    generator = torch.Generator().manual_seed(seed)
    attacked = pgd_attack(
        classifier,
        images,
        targets,
        eps=float(eps),
        steps=STEPS,
        norm="linf",
        step_size=2.5 * eps / STEPS,
        random_start=True,
        generator=generator,
        targeted=True,
    )
    with torch.no_grad():
        reached = classifier(attacked).argmax(dim=1) == targets
    return float(reached.float().mean()) if len(reached) else 0.0


def _inputs(domain: Any, split_name: str, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded draw of up to ``n`` images of the split, and a random other class for each."""
    split = domain.split(split_name)
    labels = torch.as_tensor(split.labels)
    generator = torch.Generator().manual_seed(seed)
    rows = torch.randperm(len(labels), generator=generator)[: min(n, len(labels))]
    rows = rows.sort().values
    images = split.take(rows) if hasattr(split, "take") else torch.as_tensor(split.images)[rows]
    sources = labels[rows]
    shift = torch.randint(1, max(domain.num_classes, 2), (len(rows),), generator=generator)
    return images.float(), (sources + shift) % domain.num_classes


def find_pgd_budget(domain: Any, *, inputs: int = INPUTS, seed: int = 0, device: str = "cpu") -> BudgetSearch:
    """The smallest L∞ budget at which the control's attack reaches the target on :data:`REACH` of
    the inputs, on every explained classifier of ``domain`` (see the module docstring).

    Args:
        domain: the domain object (its ``selection`` split role and ``explained`` models).
        inputs: how many inputs of the selection split to attack.
        seed: the seed of the draw of inputs, their targets and the attack's random start.
        device: where to run the attack.

    Returns:
        The :class:`BudgetSearch`.

    Raises:
        ValueError: if the domain has no selection split, no explained classifier or fewer than
            two classes, or ``inputs`` is not a positive int.
    """
    from cfcheck.models.zoo import ModelZoo

    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        raise ValueError(f"`inputs` must be a positive int, got {inputs!r}")
    split_name = dict(domain.split_roles).get("selection")
    explained = tuple(dict(domain.model_roles).get("explained", ()))
    if split_name is None or not explained or domain.num_classes < 2:
        raise ValueError(
            f"domain {domain.name!r}: sizing the adversarial control needs a 'selection' split, an 'explained' "
            f"model and two classes or more (it has splits {sorted(domain.split_roles)}, explained {list(explained)}, "
            f"{domain.num_classes} classes)"
        )
    images, targets = _inputs(domain, split_name, inputs, seed)
    images, targets = images.to(device), targets.to(device)
    zoo = ModelZoo(domain, device)
    classifiers = [zoo[name] for name in explained]

    def rate(eps: float) -> float:
        return min(reach_rate(model, images, targets, eps, seed) for model in classifiers)

    trials: list[tuple[float, float]] = []

    def tried(eps: float) -> bool:
        trials.append((eps, rate(eps)))
        return trials[-1][1] >= REACH

    low, eps = 0.0, MIN_EPS
    while not tried(eps):
        if eps >= MAX_EPS:
            return BudgetSearch(MAX_EPS, trials[-1][1], trials, len(targets), split_name, capped=True)
        low, eps = eps, min(2 * eps, MAX_EPS)
    high = eps
    if low > 0:
        for _ in range(BISECTIONS):
            middle = (low + high) / 2
            if tried(middle):
                high = middle
            else:
                low = middle
    reached = next(r for e, r in reversed(trials) if e == high)
    return BudgetSearch(high, reached, trials, len(targets), split_name)
