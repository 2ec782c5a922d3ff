"""The bundled morpho domain exported through the public API, as a user would declare it.

:func:`make_domain` builds an :class:`~cfcheck.domains.data.ImageDomain` from arrays: morpho's own
images of the splits it scores and compares with (train, selection = ``val``, scored = ``test``,
reference; the same images in the same order, so the same split assignment), an attribute table of
morpho's factors (digit categorical of 10 values, thickness and intensity continuous with morpho's own
intervention bins, the deciles of its train split), the causal graph thickness → intensity, the
intensity mechanism handed over as a user's mechanism, and morpho's bundled models handed over in a
:class:`~cfcheck.models.store.ModuleStore` under the SCM roles: the anti-causal predictors, the
embedding and the minimality VAE (evaluation), the three image mechanisms and the two attribute flows
(what the bundled generators build on).

Two intensity mechanisms (``mechanism=``):

* ``"equation"``: abduction and prediction by morpho's own structural equation
  (:func:`~cfcheck.domains.morpho.scm.abduct_intensity_noise`,
  :func:`~cfcheck.domains.morpho.scm.intensity_mechanism`). The bundled domain propagates an
  intervention by that equation with the exogenous noise it keeps (``counterfactual_parents``); the
  equation is invertible, so abducting the noise from the observed parents gives the same
  counterfactual parents to float precision. This is the mechanism the equality test uses.
* ``"flows"``: morpho's learned flows (``thickness_flow`` is a root's and unused; ``intensity_flow``
  given thickness), the attribute mechanisms the bundled *generators* use. They approximate the
  equation (their recipe's bar: counterfactual intensities within 3 grey levels on average), so the
  targets of do(thickness) move by that much and the scores that read intensity differ a little.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

#: the ImageDomain role → morpho's split of that role (``MorphoDomain.split_roles``)
SPLITS = {"train": "train", "selection": "val", "scored": "test", "reference": "reference"}
#: the roles handed over: the SCM suites' evaluation models and what the bundled generators load
ROLES: dict[str, tuple[str, ...]] = {
    "anticausal_predictors": ("predictor_thickness", "predictor_intensity", "predictor_digit"),
    "embedding": ("embedding",),
    "minimality_vae": ("cld_vae",),
    "scm_image_mechanisms": ("cvae", "chvae", "cgan"),
    "attribute_mechanisms": ("thickness_flow", "intensity_flow"),
}
DOMAIN_NAME = "morpho_public"
MECHANISMS = ("equation", "flows")


def _equation_mechanism() -> Any:
    from cfcheck.domains.attributes import Mechanism
    from cfcheck.domains.morpho.scm import abduct_intensity_noise, intensity_mechanism

    return Mechanism(
        abduct=lambda values, parents: abduct_intensity_noise(parents["thickness"].float(), values.float()),
        predict=lambda noise, parents: intensity_mechanism(parents["thickness"].float(), noise),
    )


class _FlowMechanism:
    """The intensity mechanism by morpho's learned flow given thickness (as the bundled generators
    propagate; clamped to grey levels as they do)."""

    def __init__(self, flow: Any) -> None:
        self.flow = flow

    @torch.no_grad()
    def abduct(self, values: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.flow.abduct(values.float(), parents["thickness"].float()[:, None])

    @torch.no_grad()
    def predict(self, noise: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        out: torch.Tensor = self.flow.predict(noise, parents["thickness"].float()[:, None]).clamp(0.0, 255.0)
        return out


def intervention_edges() -> dict[str, tuple[float, ...]]:
    """Morpho's intervention bins, computed as it computes them: the deciles of its train split."""
    from cfcheck.domains.morpho.domain import INTERVENTION_BINS
    from cfcheck.domains.morpho.splits import split_factors

    factors = split_factors("train")
    levels = torch.linspace(0, 1, INTERVENTION_BINS + 1, dtype=torch.float64)
    return {
        name: tuple(torch.quantile(getattr(factors, name).double(), levels).float().tolist())
        for name in ("thickness", "intensity")
    }


def morpho_models() -> dict[str, torch.nn.Module]:
    """Every model of :data:`ROLES`, loaded from morpho's bundled store."""
    from cfcheck.domains.morpho import MorphoDomain

    store = MorphoDomain().model_store
    return {name: store.load(name) for names in ROLES.values() for name in names}


def make_domain(mechanism: str = "equation", root: str | os.PathLike[str] = ".") -> Any:
    """The public domain (see the module docstring).

    Args:
        mechanism: ``"equation"`` or ``"flows"``, the intensity mechanism handed over.
        root: the domain's folder (its calibration would go there; it holds none).

    Raises:
        ValueError: for another mechanism.
    """
    from cfcheck.domains.attributes import Attributes, categorical, continuous
    from cfcheck.domains.data import ArraySource, ImageDomain
    from cfcheck.domains.morpho.splits import load_split, split_factors
    from cfcheck.models.store import ModuleStore

    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    sources, tables = {}, {}
    for role, split in SPLITS.items():
        data, factors = load_split(split), split_factors(split)
        sources[role] = ArraySource(data.images.numpy(), data.labels.numpy(), name=f"morpho {split}")
        tables[role] = {name: getattr(factors, name).numpy() for name in ("thickness", "intensity", "digit")}
    models = morpho_models()
    own = _equation_mechanism() if mechanism == "equation" else _FlowMechanism(models["intensity_flow"])
    edges = intervention_edges()
    attributes = Attributes(
        [
            continuous("thickness", bins=edges["thickness"]),
            continuous("intensity", bins=edges["intensity"]),
            categorical("digit", count=10),
        ],
        graph={"intensity": ("thickness",)},
        table=tables,
        mechanisms={"intensity": own},
    )
    readers = {name: {"attribute": name.removeprefix("predictor_")} for name in ROLES["anticausal_predictors"]}
    return ImageDomain(
        DOMAIN_NAME if mechanism == "equation" else f"{DOMAIN_NAME}_flows",
        sources,
        root=root,
        model_roles=ROLES,
        class_names=tuple(str(d) for d in range(10)),
        model_store=ModuleStore(models, **readers),
        attributes=attributes,
    )


def make_flows_domain() -> Any:
    """:func:`make_domain` with morpho's learned intensity flow as the mechanism."""
    return make_domain("flows")
