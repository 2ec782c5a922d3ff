"""Checksummed loading of the bundled reference models, one manifest per domain folder.

The weights live in ``reference_models/<domain>/`` beside that domain's ``manifest.json``
(keys ``"<domain>/<name>"``) and model cards. Any family of network can be loaded: an entry's
``architecture`` is built through :mod:`cfcheck.models.builders`, where classifiers and
generative models register their builders; nothing here assumes an input shape.

Scores are only comparable across papers if everyone evaluates with the same models, so a
weight file is used only after its sha256 matches the manifest; a mismatch is an error with
the fix in its message, never a warning. Verified hashes are memoised per (path, mtime,
size), so a session that loads the same model many times hashes it once.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from cfcheck.core.io import atomic_write_bytes, atomic_write_text

from .builders import build_model

__all__ = [
    "MANIFEST_NAME",
    "ReferenceModelError",
    "available_domains",
    "available_models",
    "domain_dir",
    "file_sha256",
    "load_manifest",
    "load_model",
    "model_entry",
    "save_state_dict",
    "save_weights",
    "update_manifest",
    "verify_file",
    "weights_dir",
    "write_manifest",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1

_VERIFIED: dict[tuple[str, int, int], str] = {}


class ReferenceModelError(RuntimeError):
    """A reference model is unknown, missing, or its weights do not match the manifest."""


def weights_dir() -> Path:
    """The root folder of the bundled weights: one sub-folder per domain (see :func:`domain_dir`)."""
    return Path(str(importlib.resources.files("cfcheck.reference_models")))


def domain_dir(domain: str) -> Path:
    """The bundled folder of ``domain``: its ``manifest.json``, weight files and model cards."""
    if not isinstance(domain, str) or not domain or "/" in domain or domain.startswith("."):
        raise ValueError(
            f"domain must be a plain folder name (a domain's name: no '/', no leading '.'), got {domain!r}"
        )
    return weights_dir() / domain


def available_domains() -> list[str]:
    """Domains with a bundled manifest, sorted."""
    return sorted(p.parent.name for p in weights_dir().glob(f"*/{MANIFEST_NAME}"))


def empty_manifest() -> dict[str, Any]:
    return {"format": MANIFEST_FORMAT, "models": {}}


def load_manifest(path: str | os.PathLike[str] | None = None, *, domain: str | None = None) -> dict[str, Any]:
    """The manifest at ``path``, or without a path the bundled one of ``domain``.

    A missing file is an empty manifest, so a domain without bundled models has none.
    """
    if path is None:
        if domain is None:
            raise ValueError("load_manifest needs a path or a domain (load_manifest(domain=...))")
        path = domain_dir(domain) / MANIFEST_NAME
    path = Path(path)
    if not path.exists():
        return empty_manifest()
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != MANIFEST_FORMAT or not isinstance(manifest.get("models"), dict):
        raise ReferenceModelError(
            f"{path}: expected a manifest with format {MANIFEST_FORMAT} and a 'models' mapping, "
            f"got format {manifest.get('format')!r}"
        )
    return manifest


def write_manifest(manifest: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Writes ``manifest`` as sorted, indented JSON, atomically (no half-written manifest)."""
    path = Path(path)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes (streamed)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _resolve(weights: str | os.PathLike[str] | None, domain: str) -> tuple[Path, dict[str, Any]]:
    """The weights folder and its manifest; a folder without one uses the bundled manifest."""
    folder = Path(weights) if weights is not None else domain_dir(domain)
    own = folder / MANIFEST_NAME
    manifest = load_manifest(own) if own.exists() else load_manifest(domain=domain)
    return folder, manifest


def available_models(domain: str | None = None, role: str | None = None) -> list[str]:
    """Names of the bundled models of ``domain`` (optionally of one role), sorted.

    ``domain=None`` means every domain with a bundled manifest; the names are then qualified,
    ``"<domain>/<name>"`` (the manifest keys), since two domains may share a model name.
    """
    if domain is None:
        return [f"{d}/{name}" for d in available_domains() for name in available_models(d, role)]
    prefix = f"{domain}/"
    return sorted(
        key[len(prefix) :]
        for key, entry in load_manifest(domain=domain)["models"].items()
        if key.startswith(prefix) and (role is None or entry.get("role") == role)
    )


def _entry(manifest: dict[str, Any], name: str, domain: str) -> dict[str, Any]:
    key = f"{domain}/{name}"
    try:
        return manifest["models"][key]
    except KeyError:
        known = sorted(k.split("/", 1)[1] for k in manifest["models"] if k.startswith(f"{domain}/"))
        raise ReferenceModelError(f"unknown reference model {key!r}; the {domain} models are {known}") from None


def model_entry(name: str, *, domain: str) -> dict[str, Any]:
    """The manifest entry of a bundled model (a copy: edits do not leak into the registry)."""
    return json.loads(json.dumps(_entry(load_manifest(domain=domain), name, domain)))


def _verified_sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _VERIFIED:
        _VERIFIED[key] = file_sha256(path)
    return _VERIFIED[key]


def verify_file(path: Path, expected: str, name: str, fix: str | None = None) -> None:
    """Raises :class:`ReferenceModelError` unless ``path`` exists and hashes to ``expected``;
    ``fix`` says how to repair it (default: the bundled models' advice)."""
    fix = fix or f"restore the file from the cfcheck release or regenerate it with `cfcheck retrain --only {name}`"
    if not path.is_file():
        raise ReferenceModelError(
            f"weights file {path} for reference model {name!r} is missing (expected sha256 {expected}); {fix}"
        )
    actual = _verified_sha256(path)
    if actual != expected:
        raise ReferenceModelError(
            f"weights file {path} does not match the manifest: expected sha256 {expected}, "
            f"actual {actual}; the file is corrupted or was modified — {fix}"
        )


def load_model(
    name: str,
    *,
    domain: str,
    device: str | torch.device = "cpu",
    weights_dir: str | os.PathLike[str] | None = None,
) -> nn.Module:
    """A verified, frozen reference model in eval mode on ``device``.

    The file's sha256 is checked against the manifest *before* it is parsed. ``weights_dir``
    points at another folder of weights of ``domain``; its own ``manifest.json`` is used when
    it has one, otherwise the domain's bundled manifest (so a copied weight file is checked
    against the release). The network is built by :func:`cfcheck.models.builders.build_model`,
    so any registered family loads, whatever its input shape.
    """
    from safetensors.torch import load_file

    folder, manifest = _resolve(weights_dir, domain)
    entry = _entry(manifest, name, domain)
    path = folder / entry["file"]
    verify_file(path, entry["sha256"], name)
    try:
        model = build_model(entry["architecture"], **entry["arch_kwargs"])
    except ValueError as error:
        raise ReferenceModelError(f"reference model {domain}/{name}: {error}") from error
    state = load_file(str(path), device="cpu")
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        raise ReferenceModelError(
            f"weights file {path} does not fit architecture {entry['architecture']!r} {entry['arch_kwargs']}: {error}"
        ) from error
    model.eval().to(device)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def save_state_dict(
    state: dict[str, torch.Tensor], path: str | os.PathLike[str], metadata: dict[str, str] | None = None
) -> str:
    """Writes ``state`` as safetensors (atomically) and returns the file's sha256.

    The metadata goes in as ONE key holding sorted JSON: safetensors serialises its metadata
    map in hash order, which varies between calls, so several keys would make the bytes (and
    the sha256) of identical weights differ from run to run.

    Args:
        state: parameter and buffer tensors by name (moved to the CPU, made contiguous).
        path: destination ``.safetensors`` file.
        metadata: provenance strings stored in the header (domain, name, architecture).

    Returns:
        The hex sha256 the manifest records.
    """
    from safetensors.torch import save

    tensors = {k: v.detach().cpu().contiguous() for k, v in state.items()}
    header = {"cfcheck": json.dumps(metadata or {}, sort_keys=True)}
    atomic_write_bytes(path, save(tensors, metadata=header))
    return file_sha256(path)


def save_weights(model: nn.Module, path: str | os.PathLike[str], metadata: dict[str, str] | None = None) -> str:
    """:func:`save_state_dict` of ``model.state_dict()``; returns the file's sha256."""
    return save_state_dict(model.state_dict(), path, metadata)


def update_manifest(folder: str | os.PathLike[str], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Adds or replaces ``entries`` (keys ``"<domain>/<name>"``) in ``folder``'s manifest.

    Re-reads the manifest first, so entries written by an earlier call survive; returns the
    manifest as written.
    """
    path = Path(folder) / MANIFEST_NAME
    manifest = load_manifest(path)
    manifest["models"].update(entries)
    write_manifest(manifest, path)
    return manifest
