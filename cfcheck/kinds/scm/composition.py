"""Composition: applying the null intervention (do(parent = its observed value)) m times must
give back the input (Monteiro et al. 2023's axiom, as Melistas et al. 2024 §3.1 measure it after
m = 1 and m = 10 cycles). The cycles call the method through the engine, so every output is
checked as during generation, and through the persistent generation cache, so a repeated run
calls the method zero times; they are computed once per task and shared by the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from cfcheck.kinds.base import Inputs

__all__ = ["CYCLES", "composition_cycles"]

#: the cycle counts Melistas et al. report
CYCLES = (1, 10)


def composition_cycles(
    session: Any, task: Any, method: Any, cycles: Sequence[int] = CYCLES
) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """m → (the image after m null-intervention cycles, inputs never abstained on so far).

    Raises:
        cfcheck.kinds.calling.MethodOutputError: when a call's output breaks the contract.
    """
    from cfcheck.kinds import kind_spec

    def run() -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
        spec = kind_spec("scm")
        inputs = spec.inputs(session, task)
        parents = inputs.arguments["parents"]
        null = {task.factor: parents[task.factor].clone()}
        x = inputs.arguments["x"]
        kept = torch.ones(len(x), dtype=torch.bool)
        found = {}
        for m in range(1, max(cycles) + 1):
            step = Inputs(
                like=inputs.like, arguments={"x": x, "parents": parents, "intervention": null}, labels=inputs.labels
            )
            output = session.cached_call(task, method, step)
            x, kept = output.values[:, 0], kept & output.valid
            if m in cycles:
                found[m] = (x, kept.clone())
        # the example grid shows them beside the task's counterfactuals (an abstention: its input)
        start = inputs.arguments["x"]
        session.add_example_columns(
            task,
            {
                f"after {m} null cycle{'s' if m > 1 else ''}": torch.where(kept_m[:, None, None, None], x_m, start)
                for m, (x_m, kept_m) in found.items()
            },
        )
        return found

    return session.memo(("scm-composition", task, tuple(cycles)), run)
