"""The removal engine outside pytest: a :class:`LocalRun` stands in for a cfcheck session, and
:func:`removal_data` draws and attributes the removal tasks' inputs as the suites do.

The attribution calibration uses it, and so do the reproductions of Park et al.'s (2023) removal
comparisons (``reproductions/removal.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from cfcheck.core.costs import MethodClock
from cfcheck.core.seeds import BATCH_NOISE, TASK_INPUTS, seeded
from cfcheck.kinds.attribution.removal import RETRAINING, RemovalData
from cfcheck.kinds.attribution.section import AttributionSection
from cfcheck.kinds.resources import RunResources

__all__ = ["LocalRun", "attribute_batched", "removal_data"]


class LocalRun(RunResources):
    """The part of a cfcheck session the removal engine uses, without pytest."""

    def __init__(
        self, section: AttributionSection, device: str = "cpu", seed: int = 0, domains: Sequence[Any] = ()
    ) -> None:
        self.device, self.seed = torch.device(device), seed
        self._section, self._memo, self._zoos = section, {}, {}
        self.method_clock = MethodClock()  # a Run's (kinds.base.Run): seconds inside the method's calls
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


def attribute_batched(
    method: Any, x: torch.Tensor, model: torch.nn.Module, target: torch.Tensor, seed: int
) -> torch.Tensor:
    """``method.attribute`` on ``x`` in batches of 250, detached; a method that takes a
    ``generator`` gets one seeded ``seeded(seed, BATCH_NOISE, first)``: ``seed`` + the batch's
    first index."""
    import inspect

    from cfcheck.models.inference import model_device

    takes_generator = "generator" in inspect.signature(method.attribute).parameters
    device = model_device(model, x.device)  # the inputs go where the model is; attributions come back
    parts = []
    for start in range(0, len(x), 250):
        part = slice(start, start + 250)
        kwargs = (
            {"generator": torch.Generator().manual_seed(seeded(seed, BATCH_NOISE, start))} if takes_generator else {}
        )
        parts.append(
            method.attribute(x[part].to(device), model, target[part].to(device), **kwargs).detach().to(x.device)
        )
    return torch.cat(parts)


def removal_data(run: LocalRun, domain: Any, model_name: str, method: Any, seed: int = 0) -> RemovalData:
    """Training and scored inputs of ``domain`` (the object) as the removal tasks draw them,
    attributed by ``method``."""
    section = run.profile.section("attribution")
    model = run.zoo(domain)[model_name]
    parts = []
    for split_role, n, offset in (("train", section.removal_train, 6), ("scored", section.removal_test, 7)):
        data = domain.split(domain.split_roles[split_role])
        generator = torch.Generator().manual_seed(seeded(seed, TASK_INPUTS, offset))
        index = torch.randperm(len(data.labels), generator=generator)[: min(n, len(data.labels))].sort().values
        x = data.images[index].clone()
        target = run.zoo(domain).logits(model_name, x).argmax(1)
        parts += [x, data.labels[index], attribute_batched(method, x, model, target, seeded(offset, RETRAINING))]
    return RemovalData(domain, model_name, *parts)
