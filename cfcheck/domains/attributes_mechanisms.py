"""Attribute mechanisms: how an attribute follows from its parents and its own exogenous noise.

A mechanism (:class:`AttributeMechanism`) has two calls, Deep-SCM style (Pawlowski et al. 2020;
Melistas et al. 2024 §3.2): ``abduct(values, parents)`` infers each image's noise from its observed
value and parents, ``predict(noise, parents)`` gives the value that noise yields under (new)
parents. ``parents`` maps each of the attribute's parents to an N-tensor (int64 codes for a
discrete parent, float32 for a continuous one); the noise is whatever ``abduct`` returns and is
handed back to ``predict`` unchanged. A user gives their own (:class:`Mechanism` wraps two
functions) or lets cfcheck fit one to the attribute table (:func:`fit_mechanisms`):

* **a continuous child**: ``v = a + b·pa + r``, the location ``a + b·pa`` by least squares on the
  encoded parents, the residual r a conditional normalizing flow given the parents
  (:class:`~cfcheck.models.generative.flow.ScalarSplineFlow`, rational-quadratic splines from
  ``normflows``): abduction u = flow⁻¹(v − a − b·pa | pa), prediction a + b·pa* + flow(u | pa*). The
  linear location carries the parents' shift, so the spline only shapes the noise (a spline alone
  is the identity beyond its tail bound, where it would ignore a change of the parents);
* **a binary or categorical child**: a small classifier p(child | parents). Its abduction keeps the
  observed value unless a parent changed; then the prediction is the most likely value under the new
  parents (a discrete mechanism is not invertible; this is the convention of Deep-SCM-style
  benchmarks for their discrete attributes, and it keeps a null intervention exact).

Parents are encoded as: a continuous parent its value, a binary one its 0/1 code, a categorical one
of k values k − 1 indicator columns (its first value is the reference). Fitting is seeded and
deterministic (one torch thread: bit-identical), takes seconds for a few thousand rows on one CPU
core, and is cached on disk (:func:`cfcheck.core.cache.memoise_on_disk`) keyed by the table's digest,
the declarations, the seed and this code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import torch
from torch import nn

from cfcheck.core.seeds import Stream, seeded
from cfcheck.domains.attributes import (
    CATEGORICAL,
    CONTINUOUS,
    Attribute,
    AttributeMechanism,
    Mechanism,
    check_mechanism,
)

if TYPE_CHECKING:
    from cfcheck.domains.attributes import Attributes

__all__ = [
    "FLOW_ARCH",
    "FLOW_TRAINING",
    "AttributeMechanism",
    "FittedCategorical",
    "FittedContinuous",
    "Mechanism",
    "check_mechanism",
    "fit_mechanisms",
]

#: the residual flow of a continuous child (the bundled SCM's attribute flows are of this size)
FLOW_ARCH = {"num_layers": 2, "hidden": 32, "num_blocks": 2, "num_bins": 8, "tail_bound": 3.0}
#: its training: epochs, batch size, learning rate (measured: ~1-2 s per child for 2,000 rows on one core)
FLOW_TRAINING = {"epochs": 20, "batch_size": 256, "lr": 1e-3}
#: the classifier of a discrete child: hidden units, full-batch Adam steps, learning rate, weight decay
CLASSIFIER_TRAINING = {"hidden": 32, "steps": 300, "lr": 1e-2, "weight_decay": 1e-4}
#: the seed of each fitted child: the declaration's seed and the child's position in the graph's order
MECHANISM_FITS = Stream("attribute mechanism fits", stride=1009)


def encode_parents(declared: Sequence[Attribute], parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The (N, features) float32 encoding of ``parents`` of the ``declared`` attributes (module docstring)."""
    parts = []
    for attribute in declared:
        value = parents[attribute.name]
        if attribute.kind == CATEGORICAL:
            codes = value.long()
            parts.append(torch.stack([(codes == code).float() for code in range(1, len(attribute.values))], 1))
        else:
            parts.append(value.float()[:, None])
    return torch.cat(parts, 1)


class FittedContinuous(nn.Module):
    """A continuous child: a linear location in the encoded parents plus a conditional residual flow."""

    location: torch.Tensor  # a buffer (register_buffer): the slopes, then the intercept

    def __init__(self, declared: Sequence[Attribute], flow: nn.Module, location: torch.Tensor) -> None:
        super().__init__()
        self.declared = tuple(declared)
        self.flow = flow
        self.register_buffer("location", location.double())  # (features + 1,): the slopes, then the intercept

    def _locate(self, context: torch.Tensor) -> torch.Tensor:
        weights = self.location
        return (context.double() @ weights[:-1] + weights[-1]).float()

    @torch.no_grad()
    def abduct(self, values: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        context = encode_parents(self.declared, parents)
        return self.flow.abduct(values.float() - self._locate(context), context)  # type: ignore[operator]

    @torch.no_grad()
    def predict(self, noise: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        context = encode_parents(self.declared, parents)
        return self._locate(context) + self.flow.predict(noise, context)  # type: ignore[operator]


class FittedCategorical(nn.Module):
    """A binary or categorical child: a one-hidden-layer classifier on the encoded parents; the
    noise is the observed value beside the observed parents' encoding (module docstring)."""

    input_loc: torch.Tensor  # buffers (register_buffer)
    input_scale: torch.Tensor

    def __init__(self, declared: Sequence[Attribute], features: int, classes: int, hidden: int) -> None:
        super().__init__()
        self.declared = tuple(declared)
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, classes))
        self.register_buffer("input_loc", torch.zeros(features))
        self.register_buffer("input_scale", torch.ones(features))

    def logits(self, context: torch.Tensor) -> torch.Tensor:
        """Class scores of encoded parents."""
        out: torch.Tensor = self.net((context - self.input_loc) / self.input_scale)
        return out

    @torch.no_grad()
    def abduct(self, values: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([values.float()[:, None], encode_parents(self.declared, parents)], 1)

    @torch.no_grad()
    def predict(self, noise: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        context = encode_parents(self.declared, parents)
        kept = (context == noise[:, 1:]).all(1)
        return torch.where(kept, noise[:, 0].long(), self.logits(context).argmax(1))


def _feature_count(declared: Sequence[Attribute]) -> int:
    return sum(len(a.values) - 1 if a.kind == CATEGORICAL else 1 for a in declared)


def _fit_continuous(
    declared: Sequence[Attribute], values: torch.Tensor, context: torch.Tensor, seed: int
) -> dict[str, torch.Tensor]:
    from cfcheck.models.generative import GenerativeTrainConfig
    from cfcheck.models.generative.flow import train_flow

    design = torch.cat([context.double(), torch.ones(len(values), 1, dtype=torch.float64)], 1)
    location = torch.linalg.lstsq(design, values.double()[:, None], driver="gelsd").solution[:, 0]
    residual = (values.double() - design @ location).float()
    config = GenerativeTrainConfig(seed=seed, **FLOW_TRAINING)  # type: ignore[arg-type]
    flow, _ = train_flow(residual, context, {"context_features": context.shape[1], **FLOW_ARCH}, config)
    return {"location": location, **{f"flow.{k}": v.detach().clone() for k, v in flow.state_dict().items()}}


def _fit_categorical(
    declared: Sequence[Attribute], codes: torch.Tensor, context: torch.Tensor, classes: int, seed: int
) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    model = FittedCategorical(declared, context.shape[1], classes, int(CLASSIFIER_TRAINING["hidden"]))
    model.input_loc.copy_(context.mean(0))
    model.input_scale.copy_(context.std(0).clamp_min(1e-6))
    optimiser = torch.optim.Adam(
        model.parameters(), lr=CLASSIFIER_TRAINING["lr"], weight_decay=CLASSIFIER_TRAINING["weight_decay"]
    )
    for _ in range(int(CLASSIFIER_TRAINING["steps"])):
        loss = nn.functional.cross_entropy(model.logits(context), codes)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def to_fit(attributes: Attributes) -> tuple[str, ...]:
    """The attributes cfcheck fits a mechanism for: those with parents and no mechanism of the user's."""
    graph = attributes.graph
    return tuple(name for name in graph.order if graph.parents(name) and name not in attributes.mechanisms)


def _fit_all(attributes: Attributes, columns: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every fitted mechanism's tensors, ``"<attribute>/<tensor>"``."""
    state: dict[str, torch.Tensor] = {}
    # the caller's random state is left as it was; fitting needs gradients even when first asked under no_grad
    with torch.random.fork_rng(devices=[]), torch.enable_grad():
        for name in to_fit(attributes):
            declared = [attributes.by_name[p] for p in attributes.graph.parents(name)]
            context = encode_parents(declared, columns)
            seed = seeded(attributes.seed, MECHANISM_FITS, attributes.graph.order.index(name))
            attribute = attributes.by_name[name]
            if attribute.kind == CONTINUOUS:
                part = _fit_continuous(declared, columns[name], context, seed)
            else:
                part = _fit_categorical(declared, columns[name], context, len(attribute.values), seed)
            state.update({f"{name}/{key}": value for key, value in part.items()})
    return state


def _build(attributes: Attributes, name: str, state: Mapping[str, torch.Tensor]) -> AttributeMechanism:
    from cfcheck.models.generative.flow import ScalarSplineFlow

    declared = [attributes.by_name[p] for p in attributes.graph.parents(name)]
    own = {key.split("/", 1)[1]: value for key, value in state.items() if key.startswith(f"{name}/")}
    features = _feature_count(declared)
    model: nn.Module
    if attributes.by_name[name].kind == CONTINUOUS:
        flow = ScalarSplineFlow(context_features=features, **FLOW_ARCH)  # type: ignore[arg-type]
        flow.load_state_dict({k.removeprefix("flow."): v for k, v in own.items() if k.startswith("flow.")})
        model = FittedContinuous(declared, flow.eval(), own["location"])
    else:
        hidden = int(CLASSIFIER_TRAINING["hidden"])
        model = FittedCategorical(declared, features, len(attributes.by_name[name].values), hidden)
        model.load_state_dict(dict(own))
    return model.eval()  # type: ignore[return-value]  # both implement the protocol


def declaration_digest(attributes: Attributes) -> str:
    """The declarations a fit depends on (types, values, graph, which mechanisms are the user's), as text."""
    return json.dumps(
        {
            "attributes": [[a.name, a.kind, [str(v) for v in a.values]] for a in attributes.by_name.values()],
            "graph": {name: list(attributes.graph.parents(name)) for name in attributes.names},
            "fitted": list(to_fit(attributes)),
            "settings": [FLOW_ARCH, FLOW_TRAINING, CLASSIFIER_TRAINING],
        },
        sort_keys=True,
    )


def fit_mechanisms(attributes: Attributes, columns: Mapping[str, torch.Tensor]) -> dict[str, AttributeMechanism]:
    """cfcheck's mechanisms of the attributes the user gave none for (:func:`to_fit`), fitted to ``columns``.

    Args:
        attributes: the declaration.
        columns: attribute -> every row of the table (int64 codes / float32 values).

    Returns:
        attribute -> its fitted mechanism (in eval mode), from the disk cache where it holds this fit.
    """
    names = to_fit(attributes)
    if not names:
        return {}
    from pathlib import Path

    from cfcheck.core.cache import file_digest, memoise_on_disk, tensor_digest
    from cfcheck.models.generative.flow import network, recipe

    state = memoise_on_disk(
        "domains.attribute_mechanisms",
        lambda: _fit_all(attributes, columns),
        table=tensor_digest(*(columns[name] for name in attributes.names)),
        declaration=declaration_digest(attributes),
        seed=int(attributes.seed),
        code=file_digest(Path(__file__), Path(network.__file__), Path(recipe.__file__)),
        torch=torch.__version__,
    )
    return {name: _build(attributes, name, state) for name in names}
