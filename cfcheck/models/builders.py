"""The architectures the registry can build, of every role, by the name a manifest records.

A manifest entry names its network as ``architecture`` + ``arch_kwargs``; the registry
instantiates it through :func:`build_model` before loading the verified weights. Each role
package registers its own builders here: :mod:`cfcheck.models.classifiers` the 32×32
classifiers, :mod:`cfcheck.models.generative` (through
:func:`~cfcheck.models.generative.register_generative_architecture`) diffusion, flow, VAE and
GAN networks. The table knows nothing about input shapes beyond what a registration declares,
so the registry never assumes a classifier of one image size.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import nn

__all__ = [
    "ArchitectureSpec",
    "architecture",
    "architecture_names",
    "build_model",
    "register_architecture",
    "unregister_architecture",
]

#: role packages whose import registers the bundled architectures
BUILTIN_PACKAGES = ("cfcheck.models.classifiers", "cfcheck.models.generative", "cfcheck.models.predictors")

_TABLE: dict[str, ArchitectureSpec] = {}
_builtins_loaded = False


@dataclass(frozen=True)
class ArchitectureSpec:
    """One registered architecture.

    Attributes:
        name: the name manifests record (``"small_cnn"``, ``"ddpm_unet"``).
        factory: ``factory(**arch_kwargs) -> nn.Module``.
        family: the model family that registered it: ``"classifier"`` (every network of
            :mod:`cfcheck.models.classifiers`, whatever its manifest ``role``: classifier,
            oracle, attribute oracle, embedding) or a generative family (``"diffusion"``,
            ``"flow"``, ``"vae"``, ``"gan"``, ...).
        input_shape: the per-sample input shape (without the batch dimension) the network
            expects, or ``None`` when it depends on ``arch_kwargs``; informational: the
            network itself checks its inputs.
    """

    name: str
    factory: Callable[..., nn.Module]
    family: str
    input_shape: tuple[int, ...] | None = None


def register_architecture(
    name: str,
    factory: Callable[..., nn.Module],
    *,
    family: str,
    input_shape: tuple[int, ...] | None = None,
    replace: bool = False,
) -> ArchitectureSpec:
    """Makes ``name`` buildable by :func:`build_model` (and loadable by the registry).

    Args:
        name: the architecture name a manifest entry records.
        factory: called with the entry's ``arch_kwargs``; returns the network.
        family: the registering family (``"classifier"``, ``"diffusion"``, ...).
        input_shape: per-sample input shape, if fixed.
        replace: allow re-registering an existing name (otherwise an error, so two families
            cannot silently claim one name).

    Returns:
        The stored :class:`ArchitectureSpec`.

    Raises:
        TypeError: if ``name`` is not a str or ``factory`` is not callable.
        ValueError: if ``name`` is empty or already registered (and ``replace`` is false).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"architecture name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory of architecture {name!r} must be callable, got {type(factory).__name__}")
    if not isinstance(family, str) or not family:
        raise ValueError(f"architecture {name!r} needs a family, got {family!r}")
    if name in _TABLE and not replace and _TABLE[name].factory is not factory:
        raise ValueError(
            f"architecture {name!r} is already registered by family {_TABLE[name].family!r}; "
            "pick another name or pass replace=True"
        )
    spec = ArchitectureSpec(
        name, factory, family, tuple(int(d) for d in input_shape) if input_shape is not None else None
    )
    _TABLE[name] = spec
    return spec


def unregister_architecture(name: str) -> None:
    """Removes ``name`` from the table (for tests that register temporary architectures)."""
    _TABLE.pop(name, None)


def _load_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for package in BUILTIN_PACKAGES:
            importlib.import_module(package)


def architecture(name: str) -> ArchitectureSpec:
    """The registration of ``name``; unknown names list the known ones.

    Raises:
        TypeError: if ``name`` is not a str.
        ValueError: if no family registered ``name``.
    """
    if not isinstance(name, str):
        raise TypeError(f"architecture must be a str, got {type(name).__name__}")
    _load_builtins()
    try:
        return _TABLE[name]
    except KeyError:
        raise ValueError(f"unknown architecture {name!r}; expected one of {architecture_names()}") from None


def architecture_names(family: str | None = None) -> list[str]:
    """Registered architecture names (optionally of one family), sorted."""
    _load_builtins()
    return sorted(name for name, spec in _TABLE.items() if family is None or spec.family == family)


def build_model(name: str, **arch_kwargs: Any) -> nn.Module:
    """Instantiates the registered architecture ``name`` with ``arch_kwargs``.

    A JSON round-trip turns tuples into lists, so list-valued arguments are passed on as
    tuples: an entry read back from a manifest builds the same network as the recipe did.

    Returns:
        The freshly initialised network.
    """
    spec = architecture(name)
    kwargs = {key: tuple(value) if isinstance(value, list) else value for key, value in arch_kwargs.items()}
    return spec.factory(**kwargs)
