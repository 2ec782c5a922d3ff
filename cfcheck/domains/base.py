"""The one protocol every bundled domain implements.

A domain is a procedurally generated data set with known generative factors: fixed seeded
splits, classes, the factors of its structural causal model where it has one, the roles its
bundled reference models play, and optional capabilities (what only a known generative
process can give, such as the true counterfactual). Kinds and suites use domains only through
this protocol; what a domain cannot do is declared in ``capabilities``, never discovered by
an AttributeError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, cast, runtime_checkable

#: Capabilities a domain may declare.
CLASS_COUNTERFACTUAL = "class_counterfactual"  # the true counterfactual under do(class = target)
INTERVENTION_COUNTERFACTUAL = "intervention_counterfactual"  # under do(factor = value), and its parents
FACTOR_MEASUREMENT = "factor_measurement"  # measure_factors(images): continuous factors read off the image
PARENT_RESAMPLING = "parent_resampling"  # propagate_parents(parents, do) and resample_with_parents(parents, seed)

#: Roles of the splits (role → split name in ``Domain.split_roles``).
SPLIT_ROLES = (
    "train",  # explained classifiers are trained on it
    "selection",  # model selection, feature standardisation, ideal pairs; never scored
    "scored",  # the inputs methods are run on
    "reference",  # real images for realism references and real-vs-real floors
)
#: Split roles a domain may add (role → split name in ``Domain.split_roles``).
OPTIONAL_SPLIT_ROLES = (
    # more real images like "reference" (never trained on, never scored), taken only for a task
    # with a class of more counterfactuals than "reference" can hold references and floors for
    "reference_extra",
)

from cfcheck.models.roles import EVALUATION_ROLES, METHOD_ROLES, MODEL_ROLES  # noqa: E402,F401 - the one vocabulary


@runtime_checkable
class Domain(Protocol):
    """A domain (see the module docstring): a bundled one or a user's.

    ``model_roles`` is the one role map (role of :data:`MODEL_ROLES` → model names); the models
    themselves come from ``model_store`` (:class:`cfcheck.models.store.ModelStore`, a folder of
    checked safetensors weights, or :class:`~cfcheck.models.store.ModuleStore`, ready modules).
    ``calibration_dir`` is the folder that holds the domain's calibrated bars and the controls'
    values (``cfcheck calibrate --domain`` writes them), or None where it keeps none.

    Optional hook: a domain with bundled reference models defines ``model_recipes()``,
    returning a :class:`cfcheck.models.classifiers.recipes.ModelRecipes` (its recipe table,
    tasks and their targets); ``cfcheck retrain`` and the model code find them through it.
    A domain with bundled generative models also defines ``generative_recipes()``: name ->
    :class:`cfcheck.models.generative.GenerativeRecipe`.

    Optional hook: ``protocol_identity()`` returns JSON-ready data that changes whenever the
    domain's data change (a digest of its images and splits, a data revision); it is the
    ``domain`` part of its protocols' identity (:mod:`cfcheck.core.protocol`).
    """

    name: str
    input_shape: tuple[int, ...]
    num_classes: int
    class_names: tuple[str, ...]
    #: the SCM's parents a counterfactual generator receives (empty without an SCM)
    factor_names: tuple[str, ...]
    #: which factors are categorical (the others are continuous)
    categorical_factors: tuple[str, ...]
    split_roles: Mapping[str, str]
    model_roles: Mapping[str, tuple[str, ...]]
    capabilities: frozenset[str]

    @property
    def model_store(self) -> Any:
        """The domain's models (see the class docstring); an attribute or a property."""

    @property
    def calibration_dir(self) -> Any:
        """The domain's bars and calibration values (None: it keeps none); an attribute or a property."""

    #: True where the metric cards' bars were calibrated on this domain's controls (the bundled
    #: domains); a user's domain is False: its bars come only from its own calibration
    card_calibrated: bool

    def split(self, name: str, n: int | None = None) -> Any:
        """A split (``.images`` N×C×H×W in [0, 1], ``.labels`` int64 N, ``.factors``)."""


class BundledDomain:
    """What the domains bundled with cfcheck share: their store is the package's folder of
    weights, their calibration values sit in their own package folder, and the metric cards'
    bars were calibrated on their controls."""

    name: str
    card_calibrated = True
    #: the revision of how the domain generates its data, bumped by hand whenever that changes
    data_revision = 1

    def protocol_identity(self) -> dict[str, int]:
        """The domain part of its protocols' identity: its data revision."""
        return {"data_revision": self.data_revision}

    @property
    def model_store(self) -> Any:
        from cfcheck.models.store import ModelStore

        return ModelStore.bundled(self.name)

    @property
    def calibration_dir(self) -> Any:
        from pathlib import Path

        return Path(__file__).parent / self.name

    def retrain(self, request: Any) -> dict[str, Any]:
        """Retrain the domain's bundled models (``cfcheck retrain``): with cfcheck's classifier and
        generative recipes (:func:`cfcheck.models.retrain.train_with_cfcheck_recipes`); a domain that
        trains its models with recipes of its own overrides this.

        Args:
            request: a :class:`cfcheck.models.retrain.RetrainRequest`.

        Returns:
            The new manifest entries keyed ``"<domain>/<name>"``.
        """
        from cfcheck.models.capabilities import ModelDomain
        from cfcheck.models.retrain import train_with_cfcheck_recipes

        return train_with_cfcheck_recipes(cast(ModelDomain, self), request)  # a mixin of every bundled Domain


class MissingCapability(LookupError):
    """A domain was asked for something its generative process does not provide."""


def require(domain: Domain, capability: str) -> None:
    """Raise :class:`MissingCapability`, naming what the domain does provide, when ``domain``
    lacks ``capability``."""
    if capability not in domain.capabilities:
        raise MissingCapability(
            f"domain {domain.name!r} cannot compute {capability.replace('_', ' ')}; "
            f"it provides: {', '.join(sorted(domain.capabilities)) or 'no optional capabilities'}"
        )


def split_prefix_size(name: str, n: object, sizes: dict[str, int]) -> int:
    """How many of split ``name``'s samples a request for its first ``n`` (None: all) means.

    Raises:
        ValueError: for an unknown split (naming the known ones) or an ``n`` that is not an int
            in [0, the split's size].
    """
    if name not in sizes:
        raise ValueError(f"unknown split {name!r}; expected one of {sorted(sizes)}")
    size = sizes[name]
    if n is None:
        return size
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= size:
        raise ValueError(f"n must be an int in [0, {size}] for split {name!r}, got {n!r}")
    return n
