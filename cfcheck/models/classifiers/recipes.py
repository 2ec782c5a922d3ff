"""The deterministic recipe of a bundled reference model, as plain data.

A :class:`ModelSpec` says what a model is for (role, task, architecture, quality bar); its
:class:`TrainingRecipe` says exactly how it was trained (seed, data, optimiser, epochs,
augmentation). Both are stored verbatim in the manifest, so the manifest alone is enough to
reproduce a weight file bit for bit on the same torch version and thread count.

Which models a domain has, and what their tasks mean, is the domain's own business: its
:class:`cfcheck.domains.base.Domain` offers them through the optional ``model_recipes()``
hook, which returns a :class:`ModelRecipes` (the recipe table, the tasks and their targets).
Nothing here names a domain: the functions take the domain object
(:class:`cfcheck.models.capabilities.ModelDomain`), and :func:`model_specs` binds each spec to it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from cfcheck.models.capabilities import ClassifierRecipes, require_domain_object

if TYPE_CHECKING:  # only for annotations: the recipes stay importable without torch
    import torch

    from cfcheck.models.capabilities import ModelDomain

__all__ = [
    "ROLES",
    "ModelRecipes",
    "ModelSpec",
    "TrainingRecipe",
    "domain_recipes",
    "model_specs",
    "smoke_spec",
]

ROLES = ("classifier", "oracle", "attribute_oracle", "embedding")


class ModelRecipes(Protocol):
    """What a domain's ``model_recipes()`` hook returns: its reference models and their targets."""

    #: what the domain's models may predict (``ModelSpec.task`` values)
    tasks: tuple[str, ...]

    def specs(self) -> dict[str, ModelSpec]:
        """The domain's reference models by name (``domain`` left unset: :func:`model_specs` binds it)."""

    def targets(self, task: str, data: Any) -> dict[str, torch.Tensor]:
        """Integer labels of ``task`` for a split of the domain: head name -> labels.

        A single-head model has the one head ``"label"``; for a multi-head model the first
        head is the main one (model selection, ``test_accuracy``, the class count).
        """

    def split_seed(self, split: str) -> int | None:
        """The seed that generated ``split`` (recorded in the manifest), or None."""


@dataclass(frozen=True)
class TrainingRecipe:
    """How one model is trained; ``epochs == 0`` means "initialise and ship untrained"."""

    seed: int
    split: str
    n: int | None
    epochs: int
    batch_size: int = 128
    optimizer: str = "adamw"
    lr: float = 2e-3
    weight_decay: float = 1e-4
    schedule: str = "cosine"
    #: {} or {"kind": "gaussian_noise", "sigma_max": 0.5}
    #: or {"kind": "pgd", "norm": "l2", "eps": 1.5, "steps": 7, "eps_warmup_epochs": 1}
    augmentation: dict[str, Any] = field(default_factory=dict)
    #: "val_accuracy": keep the epoch with the best accuracy on ``selection_split``; "last".
    select_on: str = "last"
    selection_split: str = "val"
    selection_n: int | None = 3000

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ModelSpec:
    """What a reference model is: role, task, architecture, recipe and quality bar."""

    name: str
    role: str
    task: str
    architecture: str
    arch_kwargs: dict[str, Any]
    recipe: TrainingRecipe
    #: metric -> {"min": v} and/or {"max": v}, re-checked by the project's tests
    quality_bar: dict[str, dict[str, float]]
    purpose: str
    #: the attribute an attribute oracle predicts (keys of the LVS suites)
    attribute: str | None = None
    #: robust accuracy evaluation (PGD on the test split), for adversarially trained models
    robust_eval: dict[str, Any] | None = None
    test_n: int | None = None
    #: label-free logit standardisation fitted after training (or, untrained, after init):
    #: {"n": N, "balance": bool} — statistics of the first N images of the recipe's split,
    #: see :func:`cfcheck.models.classifiers.architectures.calibrate_logits`; needs an architecture with a
    #: ``logit_standardisation`` (``small_cnn`` with ``standardise_logits=True``)
    logit_calibration: dict[str, Any] | None = None
    #: targeted-PGD transfer from an explained classifier, measured into ``quality`` (keys of
    #: :func:`cfcheck.models.classifiers.transfer.adversarial_transfer`: source, n, eps, steps, seed)
    transfer_eval: dict[str, Any] | None = None
    #: free text for the manifest and the model card (measured facts, with their command)
    notes: tuple[str, ...] = ()
    #: the domain object whose data and targets the model is trained on; :func:`model_specs` sets it
    domain: ModelDomain | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if not isinstance(self.task, str) or not self.task:
            raise ValueError(f"{self.name}: task must be a non-empty string, got {self.task!r}")
        if self.domain is not None:
            tasks = domain_recipes(self.domain).tasks
            if self.task not in tasks:
                raise ValueError(
                    f"task must be one of {tasks} (the tasks of domain {self.domain.name!r}), got {self.task!r}"
                )
        if (self.role == "attribute_oracle") != (self.attribute is not None):
            raise ValueError(f"{self.name}: exactly the attribute oracles name an attribute")


def domain_recipes(domain: ModelDomain) -> ModelRecipes:
    """The reference-model recipes of ``domain`` (the domain object).

    A domain has reference models when its :class:`cfcheck.domains.base.Domain` defines the
    optional ``model_recipes()`` hook (returning a :class:`ModelRecipes`).

    Raises:
        TypeError: for a domain's name instead of the object.
        ValueError: for a domain without the hook.
    """
    require_domain_object(domain, "domain_recipes")
    if not isinstance(domain, ClassifierRecipes):
        name = getattr(domain, "name", domain)
        raise ValueError(f"domain {name!r} has no reference-model recipes: its Domain defines no model_recipes()")
    recipes: ModelRecipes = domain.model_recipes()
    return recipes


def model_specs(domain: ModelDomain) -> dict[str, ModelSpec]:
    """All reference models of ``domain`` (the domain object), by name (the names the plugin loads).

    Each spec is bound to ``domain`` (``spec.domain``), which is where training and evaluation
    get its data and targets from.

    Raises:
        TypeError: for a domain's name instead of the object.
        ValueError: for a domain without recipes, a recipe listed under another name than its own,
            or one bound to another domain.
    """
    specs = domain_recipes(domain).specs()
    bound = {}
    for name, spec in specs.items():
        if spec.name != name:
            raise ValueError(f"domain {domain.name!r} lists the recipe of {spec.name!r} under {name!r}")
        if spec.domain is not None and spec.domain is not domain:
            raise ValueError(f"domain {domain.name!r} lists {name!r}, a model of domain {spec.domain.name!r}")
        bound[name] = spec if spec.domain is domain else dataclasses.replace(spec, domain=domain)
    return bound


def smoke_spec(spec: ModelSpec) -> ModelSpec:
    """The same recipe on a tiny budget: 192 images, one epoch, small evaluation sets."""
    recipe = dataclasses.replace(spec.recipe, n=192, epochs=min(spec.recipe.epochs, 1), batch_size=64, selection_n=64)
    robust_eval = None
    if spec.robust_eval is not None:
        robust_eval = {**spec.robust_eval, "steps": 2, "n": 32}
    transfer_eval = None
    if spec.transfer_eval is not None:
        transfer_eval = {**spec.transfer_eval, "steps": 2, "n": 16}
    return dataclasses.replace(spec, recipe=recipe, robust_eval=robust_eval, transfer_eval=transfer_eval, test_n=128)
