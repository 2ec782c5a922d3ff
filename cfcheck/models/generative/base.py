"""How a generative reference model plugs in: its architecture and its training recipe.

A generative model (a DDPM UNet, a normalizing flow, a VAE/HVAE, a GAN) is shipped like any
reference model: safetensors weights in ``reference_models/<domain>/``, an entry in that
domain's manifest, a measured quality with a bar. Two things make one loadable and trainable:

1. its network is registered under a name with
   :func:`register_generative_architecture` (e.g. ``"ddpm_unet"``), so the registry can build
   it from a manifest entry's ``architecture`` + ``arch_kwargs`` whatever its input shape;
2. its recipe implements :class:`GenerativeRecipe`: ``train(config, data)`` returns a
   :class:`GenerativeTrainResult` (state dict + measured quality), and ``smoke_config()`` a
   tiny configuration for tests. :func:`train_generative_model` turns that into verified
   weights and a manifest entry.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import torch
from torch import nn

from cfcheck.core.thresholds import bar_violations, parse_bars

from ..builders import ArchitectureSpec, architecture, build_model, register_architecture
from ..registry import ReferenceModelError, save_state_dict
from ..shuffling import epoch_batches, steps_per_epoch

if TYPE_CHECKING:
    from ..capabilities import ModelDomain

__all__ = [
    "GENERATIVE_FAMILIES",
    "GenerativeRecipe",
    "GenerativeTrainConfig",
    "GenerativeTrainResult",
    "RecipeFields",
    "register_generative_architecture",
    "epoch_batches",
    "steps_per_epoch",
    "train_generative_model",
]

#: the families trained by a recipe's own loop (this module's publishing): the generative ones the
#: design names, and the evaluation networks that train the same way (autoencoders for IM1/IM2,
#: anti-causal predictors of an SCM's parents, :mod:`cfcheck.models.predictors`)
GENERATIVE_FAMILIES = ("diffusion", "flow", "vae", "gan", "autoencoder", "predictor")


def with_defaults(defaults: Mapping[str, Any], options: Mapping[str, Any] | None, family: str) -> dict[str, Any]:
    """A training recipe's options: ``defaults`` updated by ``options``.

    Raises:
        ValueError: naming the unknown options and the ones ``family``'s training takes.

    Example:
        >>> with_defaults({"lr": 1e-3, "epochs": 5}, {"epochs": 2}, "toy")
        {'lr': 0.001, 'epochs': 2}
    """
    unknown = sorted(set(options or {}) - set(defaults))
    if unknown:
        raise ValueError(f"unknown {family} option(s) {unknown}; expected some of {sorted(defaults)}")
    return {**defaults, **(options or {})}


def register_generative_architecture(
    name: str,
    factory: Callable[..., nn.Module],
    *,
    family: str,
    input_shape: tuple[int, ...] | None = None,
    replace: bool = False,
) -> ArchitectureSpec:
    """Registers a generative network so the registry can build it from a manifest entry.

    Args:
        name: the ``architecture`` a manifest entry records, e.g. ``"ddpm_unet"``.
        factory: ``factory(**arch_kwargs) -> nn.Module``.
        family: one of :data:`GENERATIVE_FAMILIES`.
        input_shape: per-sample input shape (e.g. ``(1, 32, 32)`` for images, ``(3,)`` for a
            flow over three attributes), or ``None`` when ``arch_kwargs`` decide it.
        replace: allow replacing an existing registration of ``name``.

    Returns:
        The stored :class:`~cfcheck.models.builders.ArchitectureSpec`.

    Raises:
        ValueError: if ``family`` is not a generative family.
    """
    if family not in GENERATIVE_FAMILIES:
        raise ValueError(f"family must be one of {GENERATIVE_FAMILIES}, got {family!r}")
    return register_architecture(name, factory, family=family, input_shape=input_shape, replace=replace)


@dataclass(frozen=True)
class GenerativeTrainConfig:
    """How a generative model is trained: recorded verbatim as the manifest's ``training``.

    Attributes:
        seed: seeds initial weights, data order and sampling noise.
        split: domain split trained on.
        n: training examples (``None``: the whole split).
        epochs: passes over the data (``0``: ship the initialisation).
        batch_size: examples per step.
        lr: learning rate.
        options: family-specific settings (noise schedule and timesteps of a DDPM, the KL
            weight of a VAE, flow depth, ...), JSON-serialisable.
    """

    seed: int
    split: str = "train"
    n: int | None = None
    epochs: int = 1
    batch_size: int = 128
    lr: float = 2e-4
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.epochs < 0 or self.batch_size < 1 or not self.lr > 0:
            raise ValueError(
                f"epochs must be >= 0, batch_size >= 1 and lr > 0, got epochs={self.epochs}, "
                f"batch_size={self.batch_size}, lr={self.lr}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "options": dict(self.options)}


@dataclass(frozen=True)
class GenerativeTrainResult:
    """What a recipe's ``train`` returns: the weights and their measured quality.

    Attributes:
        state_dict: every parameter and buffer of the network built from the recipe's
            ``architecture`` and ``arch_kwargs`` (checked strictly before saving).
        quality: measured values by metric name (finite numbers), the keys the recipe's
            ``quality_bar`` refers to.
    """

    state_dict: Mapping[str, torch.Tensor]
    quality: Mapping[str, float]
    #: examples actually trained on, where the recipe uses part of its data (e.g. one class)
    examples: int | None = None

    def __post_init__(self) -> None:
        bad = [k for k, v in self.state_dict.items() if not isinstance(v, torch.Tensor)]
        if bad:
            raise TypeError(f"state_dict values must be tensors; not tensors: {bad}")
        for key, value in self.quality.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"quality[{key!r}] must be a finite number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class RecipeFields:
    """The fields every bundled recipe trained by :func:`train_generative_model` shares, and its
    ``smoke_config``; a family's recipe adds its own (``columns``, ``attribute``, ...), sets the
    defaults of ``role``, ``architecture`` and ``interface``, and implements ``train``.

    Attributes:
        name: model name within its domain.
        arch_kwargs: keyword arguments of the registered architecture.
        config: the training configuration.
        smoke: the tiny configuration the tests train.
        quality_bar: metric -> ``{"min"/"max": v}`` over what ``measure_quality`` returns.
        purpose: one sentence for the manifest and the model card.
        measure_quality: ``(network in eval mode, config) -> {metric: value}``, the domain's own
            evaluation.
        notes: lines for the card: what the quality values mean, how the bars were chosen.
        role: the manifest role.
        architecture: the registered architecture name.
        interface: what the network computes, for the card.
    """

    name: str
    arch_kwargs: Mapping[str, Any]
    config: GenerativeTrainConfig
    smoke: GenerativeTrainConfig
    quality_bar: Mapping[str, Mapping[str, float]]
    purpose: str
    measure_quality: Callable[[Any, GenerativeTrainConfig], Mapping[str, float]] = field(compare=False)
    notes: tuple[str, ...] = ()
    role: str
    architecture: str
    interface: str

    def smoke_config(self) -> GenerativeTrainConfig:
        return self.smoke


@runtime_checkable
class GenerativeRecipe(Protocol):
    """The deterministic recipe of one generative reference model.

    Attributes:
        name: model name within its domain (the manifest key is ``"<domain>/<name>"``).
        role: what the suites use it for, recorded as the manifest ``role`` (e.g.
            ``"diffusion"``, ``"image_mechanism"``, ``"attribute_mechanism"``).
        architecture: a name registered with :func:`register_generative_architecture`.
        arch_kwargs: keyword arguments of the architecture (JSON-serialisable).
        config: the full training configuration.
        quality_bar: metric -> ``{"min": v}`` and/or ``{"max": v}`` (see
            :class:`cfcheck.core.thresholds.Bars`).
        purpose: one sentence for the manifest and the model card.
        interface: one sentence on the model's inputs and outputs, for the card.
    """

    name: str
    role: str
    architecture: str
    arch_kwargs: Mapping[str, Any]
    config: GenerativeTrainConfig
    quality_bar: Mapping[str, Mapping[str, float]]
    purpose: str
    interface: str

    def smoke_config(self) -> GenerativeTrainConfig:
        """A tiny configuration (seconds on a CPU) exercising the whole training loop."""
        ...

    def train(self, config: GenerativeTrainConfig, data: Any) -> GenerativeTrainResult:
        """Trains from scratch under ``config`` on ``data``; deterministic for a seed."""
        ...


def train_generative_model(
    recipe: GenerativeRecipe,
    data: Any,
    out_dir: str | Path,
    *,
    domain: str,
    smoke: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Trains ``recipe`` on ``data``, writes ``<domain>_<name>.safetensors`` to ``out_dir``.

    Args:
        recipe: a :class:`GenerativeRecipe` whose architecture is registered in a generative
            family.
        data: what the recipe's ``train`` consumes (typically a domain split).
        out_dir: the domain folder the weights go to (its manifest is the caller's: add the
            returned entry with :func:`cfcheck.models.registry.update_manifest`).
        domain: the domain the model belongs to.
        smoke: train under ``recipe.smoke_config()`` instead of ``recipe.config``.
        log: receives one progress line.

    Returns:
        The manifest entry: file, sha256, architecture, arch_kwargs, role, family,
        input_shape, purpose, training, quality, quality_bar, parameters, torch_version.

    Raises:
        TypeError: if ``recipe`` does not implement :class:`GenerativeRecipe`.
        ValueError: if the architecture is not generative or the quality bar is malformed.
        ReferenceModelError: if the returned state dict does not fit the architecture.
    """
    if not isinstance(recipe, GenerativeRecipe):
        raise TypeError(
            f"{type(recipe).__name__} does not implement GenerativeRecipe "
            "(name, role, architecture, arch_kwargs, config, quality_bar, purpose, "
            "smoke_config(), train())"
        )
    spec = architecture(recipe.architecture)
    if spec.family not in GENERATIVE_FAMILIES:
        raise ValueError(
            f"{recipe.name}: architecture {recipe.architecture!r} is of family "
            f"{spec.family!r}, not a generative one {GENERATIVE_FAMILIES}"
        )
    parse_bars(recipe.quality_bar)  # a malformed bar fails before the training time is spent
    config = recipe.smoke_config() if smoke else recipe.config
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        result = recipe.train(config, data)
    seconds = time.perf_counter() - started
    model = build_model(recipe.architecture, **dict(recipe.arch_kwargs))
    try:
        model.load_state_dict(dict(result.state_dict), strict=True)
    except RuntimeError as error:
        raise ReferenceModelError(
            f"{recipe.name}: the trained state dict does not fit {recipe.architecture!r}: {error}"
        ) from error
    file_name = f"{domain}_{recipe.name}.safetensors"
    sha256 = save_state_dict(
        dict(result.state_dict),
        Path(out_dir) / file_name,
        {"domain": domain, "name": recipe.name, "architecture": recipe.architecture},
    )
    quality = dict(result.quality)
    problems = bar_violations(quality, recipe.quality_bar)
    log(
        f"[{recipe.name}] {seconds:.0f}s, quality {quality} — "
        + ("meets its quality bar" if not problems else "BELOW BAR: " + "; ".join(problems))
    )
    return {
        "file": file_name,
        "sha256": sha256,
        "architecture": recipe.architecture,
        "arch_kwargs": dict(recipe.arch_kwargs),
        "role": recipe.role,
        "family": spec.family,
        "input_shape": list(spec.input_shape) if spec.input_shape is not None else None,
        "purpose": recipe.purpose,
        "interface": recipe.interface,
        "notes": list(getattr(recipe, "notes", ()) or ()),
        **dict(getattr(recipe, "manifest_fields", {}) or {}),
        "training": config.to_dict(),
        "data": {"split": config.split, "n": result.examples if result.examples is not None else len(data)},
        "quality": quality,
        "quality_bar": {k: dict(v) for k, v in recipe.quality_bar.items()},
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch_version": torch.__version__,
        "trained_on": "cpu",
        "train_seconds": round(seconds, 1),
    }


def train_generative_models(
    domain: ModelDomain,
    names: list[str] | None = None,
    out_dir: str | Path | None = None,
    *,
    smoke: bool = False,
    log: Callable[[str], None] = print,
    num_threads: int = 1,
) -> dict[str, dict[str, Any]]:
    """Trains a domain's generative recipes (all, or ``names``); updates its manifest and cards.

    Args:
        domain: the domain object (one without the ``generative_recipes()`` hook has none).
        names: recipe names (default: all).
        out_dir: the domain folder written (default: the bundled one; a smoke run needs another).
        smoke: train each recipe's smoke configuration.
        log: receives progress lines.
        num_threads: torch CPU threads while training (recorded in the entry).

    Returns:
        The new manifest entries keyed ``"<domain>/<name>"``.
    """
    from cfcheck.models.capabilities import GenerativeRecipes, require_domain_object

    require_domain_object(domain, "train_generative_models")
    recipes = domain.generative_recipes() if isinstance(domain, GenerativeRecipes) else {}
    selected = list(recipes) if names is None else list(names)
    unknown = [name for name in selected if name not in recipes]
    if unknown:
        raise ValueError(f"unknown generative model(s) {unknown}; {domain.name} has {sorted(recipes)}")
    from ..publishing import train_into_folder

    def train_one(name: str, folder: Path) -> dict[str, Any]:
        recipe = recipes[name]
        config = recipe.smoke_config() if smoke else recipe.config
        return train_generative_model(
            recipe, domain.split(config.split, config.n), folder, domain=domain.name, smoke=smoke, log=log
        )

    return train_into_folder(domain.name, selected, train_one, out_dir, smoke=smoke, num_threads=num_threads)
