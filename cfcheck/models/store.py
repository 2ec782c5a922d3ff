"""A domain's model store: where its models come from, checked before use.

Two kinds, one interface (:class:`Store`: ``names``, ``entry``, ``digest``, ``load``):

- :class:`ModelStore`: a folder of safetensors weights and a ``manifest.json`` (sha256, how to
  build the network, metadata such as the attribute an oracle reads). The bundled domains'
  stores live inside the package (:meth:`ModelStore.bundled`); a user's lives in their
  repository. A weight file is used only after its sha256 matches the manifest. A network is
  built either from one of cfcheck's registered architectures (``architecture`` +
  ``arch_kwargs``) or, for the user's own architectures, from an importable ``builder``
  (``"pkg.module:function"``, called with ``arch_kwargs``). :meth:`ModelStore.add` saves a trained
  ``nn.Module`` and writes its entry.
- :class:`ModuleStore`: ready ``nn.Module`` objects a domain loaded its own way; their digest
  is a sha256 of their parameters and buffers, so the scorecard's provenance names them either way.

Which model plays which part (explained classifier, oracle, embedding, …) is the domain's role
map (:attr:`cfcheck.domains.base.Domain.model_roles`), not the store's.

Example:
    >>> store = ModelStore(tmp_path / "models", domain="faces")               # doctest: +SKIP
    >>> store.add("cnn", trained_cnn, builder="faces.nets:small_cnn", arch_kwargs={"width": 32})
    >>> store.load("cnn").training                                           # doctest: +SKIP
    False
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

from cfcheck.models import registry
from cfcheck.models.builders import build_model
from cfcheck.models.registry import ReferenceModelError

__all__ = ["ModelStore", "ModuleStore", "Store", "parameter_digest"]


@runtime_checkable
class Store(Protocol):
    """What the engine asks of a domain's models."""

    def names(self) -> list[str]: ...
    def entry(self, name: str) -> dict[str, Any]: ...
    def digest(self, name: str) -> str: ...
    def load(self, name: str, device: str | torch.device = "cpu") -> nn.Module: ...
    def contents_digest(self) -> str:
        """One digest of every model the store holds ("none" when it holds none)."""

    def check(self, name: str) -> None:
        """Raise what :meth:`load` would for a missing or modified file or an unbuildable entry,
        without building the network."""


def _frozen(model: nn.Module, device: str | torch.device) -> nn.Module:
    model.eval().to(device)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def parameter_digest(model: nn.Module) -> str:
    """sha256 over a module's state dict (names, dtypes, shapes and bytes, in name order)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        value = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{value.dtype}:{tuple(value.shape)};".encode())
        digest.update(value.numpy().tobytes() if value.dtype != torch.bfloat16 else value.float().numpy().tobytes())
    return digest.hexdigest()


class ModelStore:
    """A folder of verified safetensors weights with a manifest (see the module docstring).

    Args:
        folder: the store's folder (``manifest.json`` and weight files).
        domain: the domain's name; manifest keys are ``"<domain>/<model>"``.
        fix: what the error message of a missing or modified weight file advises.
    """

    def __init__(self, folder: str | os.PathLike[str], domain: str, *, fix: str | None = None) -> None:
        if not isinstance(domain, str) or not domain or "/" in domain:
            raise ValueError(f"domain must be a domain's name (no '/'), got {domain!r}")
        self.folder = Path(folder)
        self.domain = domain
        self.fix = fix or f"re-save it into {self.folder} with ModelStore.add (cfcheck.models.store)"

    @classmethod
    def bundled(cls, domain: str) -> ModelStore:
        """The store of a bundled domain, inside the installed package."""
        return cls(
            registry.domain_dir(domain),
            domain,
            fix="restore the file from the cfcheck release or regenerate it with `cfcheck retrain --only {name}`",
        )

    @property
    def manifest_path(self) -> Path:
        return self.folder / registry.MANIFEST_NAME

    def _manifest(self) -> dict[str, Any]:
        try:
            return registry.load_manifest(self.manifest_path)
        except ValueError as error:  # a JSON syntax error
            raise ReferenceModelError(f"{self.manifest_path}: not a readable manifest: {error}") from error

    def names(self) -> list[str]:
        prefix = f"{self.domain}/"
        return sorted(key[len(prefix) :] for key in self._manifest()["models"] if key.startswith(prefix))

    def entry(self, name: str) -> dict[str, Any]:
        """The manifest entry of ``name`` (a copy)."""
        manifest = self._manifest()
        key = f"{self.domain}/{name}"
        if key not in manifest["models"]:
            raise ReferenceModelError(
                f"model {name!r} of domain {self.domain!r} is not in {self.manifest_path}; it has {self.names()}"
            )
        return dict(manifest["models"][key])

    def digest(self, name: str) -> str:
        return str(self.entry(name)["sha256"])

    def contents_digest(self) -> str:
        """The manifest file's digest (its entries carry every weight file's sha256)."""
        from cfcheck.core.cache import file_digest

        return file_digest(self.manifest_path) if self.manifest_path.is_file() else "none"

    def check(self, name: str) -> None:
        """The weight file exists and matches its sha256 (memoised per file), and the entry names a
        builder that imports or a registered architecture; the network is not built."""
        entry = self.entry(name)
        registry.verify_file(self.folder / entry["file"], entry["sha256"], name, fix=self.fix.format(name=name))
        where = f"model {self.domain}/{name} in {self.manifest_path}"
        if entry.get("builder"):
            _import_builder(str(entry["builder"]), where)
        elif not entry.get("architecture"):
            raise ReferenceModelError(
                f"{where}: the entry names neither a 'builder' (pkg.module:function) nor a registered 'architecture'"
            )

    def load(self, name: str, device: str | torch.device = "cpu") -> nn.Module:
        """A verified, frozen model in eval mode on ``device`` (sha256 checked before parsing)."""
        from safetensors.torch import load_file

        entry = self.entry(name)
        path = self.folder / entry["file"]
        try:
            registry.verify_file(path, entry["sha256"], name, fix=self.fix.format(name=name))
        except ReferenceModelError as error:
            raise ReferenceModelError(f"model {self.domain}/{name} in {self.manifest_path}: {error}") from error
        model = self._build(name, entry)
        try:
            model.load_state_dict(load_file(str(path), device="cpu"), strict=True)
        except RuntimeError as error:
            raise ReferenceModelError(
                f"weights file {path} does not fit the network built for {self.domain}/{name} "
                f"({entry.get('builder') or entry.get('architecture')} {entry.get('arch_kwargs', {})}): {error}"
            ) from error
        return _frozen(model, device)

    def _build(self, name: str, entry: Mapping[str, Any]) -> nn.Module:
        kwargs = dict(entry.get("arch_kwargs") or {})
        where = f"model {self.domain}/{name} in {self.manifest_path}"
        if entry.get("builder"):
            builder = _import_builder(str(entry["builder"]), where)
            try:
                model = builder(**kwargs)
            except Exception as error:  # noqa: BLE001 - the user's builder
                raise ReferenceModelError(
                    f"{where}: builder {entry['builder']!r}{kwargs} raised {type(error).__name__}: {error}"
                ) from error
        elif entry.get("architecture"):
            try:
                model = build_model(entry["architecture"], **kwargs)
            except ValueError as error:
                raise ReferenceModelError(f"{where}: {error}") from error
        else:
            raise ReferenceModelError(
                f"{where}: the entry names neither a 'builder' (pkg.module:function) nor a registered 'architecture'"
            )
        if not isinstance(model, nn.Module):
            raise ReferenceModelError(f"{where}: the builder returned {type(model).__name__}, not a torch.nn.Module")
        return model

    def add(
        self,
        name: str,
        model: nn.Module,
        *,
        builder: str | None = None,
        architecture: str | None = None,
        arch_kwargs: Mapping[str, Any] | None = None,
        **metadata: Any,
    ) -> dict[str, Any]:
        """Save ``model``'s weights as ``<name>.safetensors`` and write (or replace) its manifest entry.

        Args:
            name: the model's name in the domain's role map.
            model: the trained network.
            builder: ``"pkg.module:function"`` building the same (untrained) network from
                ``arch_kwargs``; checked now: the function is imported and called, and the weights
                must fit what it builds.
            architecture: instead of ``builder``, one of cfcheck's registered architectures.
            arch_kwargs: keyword arguments of the builder (JSON values).
            **metadata: further entry fields (``attribute`` an attribute oracle reads, ``quality``,
                ``notes``, ...), JSON values.

        Returns:
            The entry as written.
        """
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"name must be a non-empty string without '/', got {name!r}")
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if (builder is None) == (architecture is None):
            raise ValueError(
                f"model {name!r} of domain {self.domain!r} ({self.folder}): give exactly one of "
                "builder='pkg.module:function' or architecture='<registered name>', got "
                f"{'neither' if builder is None else 'both'}"
            )
        entry: dict[str, Any] = {"file": f"{name}.safetensors", "arch_kwargs": dict(arch_kwargs or {}), **metadata}
        entry["builder" if builder else "architecture"] = builder or architecture
        self._build(name, entry).load_state_dict(model.state_dict(), strict=True)  # the entry rebuilds this network
        self.folder.mkdir(parents=True, exist_ok=True)
        entry["sha256"] = registry.save_weights(
            model, self.folder / entry["file"], {"domain": self.domain, "name": name}
        )
        registry.update_manifest(self.folder, {f"{self.domain}/{name}": entry})
        return entry

    def __repr__(self) -> str:
        return f"ModelStore({str(self.folder)!r}, domain={self.domain!r})"


class ModuleStore:
    """Ready ``nn.Module`` objects by name (a domain that loads its models its own way)."""

    def __init__(self, modules: Mapping[str, nn.Module], **entries: Mapping[str, Any]) -> None:
        bad = [name for name, module in modules.items() if not isinstance(module, nn.Module)]
        if bad:
            raise TypeError(f"ModuleStore needs torch.nn.Module values; not modules: {bad}")
        self._modules = dict(modules)
        self._entries = {name: dict(entries.get(name, {})) for name in modules}
        self._digests: dict[str, str] = {}

    def names(self) -> list[str]:
        return sorted(self._modules)

    def entry(self, name: str) -> dict[str, Any]:
        self._check(name)
        return {**self._entries[name], "sha256": self.digest(name)}

    def digest(self, name: str) -> str:
        self._check(name)
        if name not in self._digests:
            self._digests[name] = parameter_digest(self._modules[name])
        return self._digests[name]

    def contents_digest(self) -> str:
        return ",".join(f"{name}={self.digest(name)}" for name in self.names()) or "none"

    def check(self, name: str) -> None:
        self._check(name)

    def load(self, name: str, device: str | torch.device = "cpu") -> nn.Module:
        self._check(name)
        return _frozen(self._modules[name], device)

    def _check(self, name: str) -> None:
        if name not in self._modules:
            raise ReferenceModelError(f"no module named {name!r}; this domain hands over {self.names()}")


def _import_builder(spec: str, where: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ReferenceModelError(f"{where}: builder must be 'pkg.module:function', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import failure
        raise ReferenceModelError(
            f"{where}: cannot import builder module {module_name!r} ({spec}): {type(error).__name__}: {error}"
        ) from error
    builder = getattr(module, attribute, None)
    if not callable(builder):
        raise ReferenceModelError(f"{where}: {module_name} has no callable {attribute!r} (builder {spec!r})")
    return builder
