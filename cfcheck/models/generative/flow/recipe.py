"""Deterministic training of a :class:`ScalarSplineFlow` and its :class:`FlowRecipe`.

Maximum likelihood (the negative mean log-density of the standardised values) with Adam, data
order from a per-epoch seed, so a seed and a thread count fix the weights. One-dimensional flows
train in seconds to minutes on one CPU thread, so there is no checkpointing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from cfcheck.core.seeds import FLOW_EPOCH_ORDER
from cfcheck.models.shuffling import epoch_orders

from ..base import GenerativeTrainConfig, GenerativeTrainResult, RecipeFields
from .network import ScalarSplineFlow

__all__ = ["FlowRecipe", "train_flow"]


def train_flow(
    values: torch.Tensor, context: torch.Tensor | None, arch_kwargs: Mapping[str, Any], config: GenerativeTrainConfig
) -> tuple[ScalarSplineFlow, float]:
    """Fits p(values | context) by maximum likelihood.

    Args:
        values: (N,) training values.
        context: (N, context_features) their parents, or ``None`` for an unconditional flow.
        arch_kwargs: keyword arguments of :class:`ScalarSplineFlow`.
        config: seed, epochs, batch size and learning rate (``n`` limits the examples).

    Returns:
        The trained flow (eval mode) and the mean negative log-likelihood of its last epoch,
        in standardised units.
    """
    if not isinstance(values, torch.Tensor) or values.ndim != 1 or values.shape[0] < 2:
        raise ValueError(f"values must be a 1-D tensor of at least 2 values, got {getattr(values, 'shape', values)}")
    if config.n is not None:
        values = values[: config.n]
        context = None if context is None else context[: config.n]
    torch.manual_seed(config.seed)
    flow = ScalarSplineFlow(**dict(arch_kwargs))
    flow.set_standardisation(values, context)
    optimiser = torch.optim.Adam(flow.parameters(), lr=config.lr)
    n = values.shape[0]
    last = float("nan")
    flow.train()
    for _, order in epoch_orders(n, config.epochs, seed=config.seed, stream=FLOW_EPOCH_ORDER):
        total = 0.0
        for start in range(0, n, config.batch_size):
            rows = order[start : start + config.batch_size]
            c = None if context is None else context[rows]
            loss = -(flow.log_prob(values[rows], c) + flow.value_scale.log().sum()).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            total += loss.item() * rows.shape[0]
        last = total / n
    flow.eval()
    return flow, last


@dataclass(frozen=True, kw_only=True)
class FlowRecipe(RecipeFields):
    """A scalar attribute mechanism (implements :class:`~cfcheck.models.generative.GenerativeRecipe`).

    Attributes:
        name: model name within its domain.
        arch_kwargs: keyword arguments of :class:`ScalarSplineFlow`.
        config: the training configuration.
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        columns: ``(data) -> (values (N,), context (N, k) or None)``: what the flow models.
        measure_quality: ``(flow in eval mode, config) -> {metric: value}``.
        notes: lines for the card.
    """

    columns: Callable[[Any], tuple[torch.Tensor, torch.Tensor | None]] = field(compare=False)
    role: str = "attribute_mechanism"
    architecture: str = "scalar_spline_flow"
    interface: str = (
        "abduct(v, context) -> exogenous noise u (inverse pass); predict(u, context) -> v (forward "
        "pass); log_prob(v, context); values and context in the data's units (standardised inside "
        "the module, outside the flow)."
    )

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        values, context = self.columns(data)
        flow, nll = train_flow(values, context, self.arch_kwargs, config)
        with torch.no_grad():
            quality = {"train_nll": nll, **self.measure_quality(flow, config)}
        state = {k: v.detach().clone() for k, v in flow.state_dict().items()}
        return GenerativeTrainResult(
            state_dict=state, quality=quality, examples=int(min(len(values), config.n or len(values)))
        )
