"""Checksummed loading of the bundled reference models.

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

from cfcheck.io import atomic_write_text

from .architectures import build_model

__all__ = [
    "MANIFEST_NAME",
    "ReferenceModelError",
    "available_models",
    "file_sha256",
    "load_manifest",
    "load_model",
    "model_entry",
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
    """The folder of the bundled weights, manifest and model cards."""
    return Path(str(importlib.resources.files("cfcheck.reference_models")))


def empty_manifest() -> dict[str, Any]:
    return {"format": MANIFEST_FORMAT, "models": {}}


def load_manifest(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The manifest at ``path`` (default: the bundled one); a missing file is an empty manifest."""
    path = Path(path) if path is not None else weights_dir() / MANIFEST_NAME
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


def _resolve(weights: str | os.PathLike[str] | None) -> tuple[Path, dict[str, Any]]:
    """The weights folder and its manifest; a folder without one uses the bundled manifest."""
    folder = Path(weights) if weights is not None else weights_dir()
    own = folder / MANIFEST_NAME
    manifest = load_manifest(own if own.exists() else None)
    return folder, manifest


def available_models(domain: str = "morpho", role: str | None = None) -> list[str]:
    """Names of the bundled models of ``domain`` (optionally of one role), sorted."""
    prefix = f"{domain}/"
    return sorted(
        key[len(prefix):]
        for key, entry in load_manifest()["models"].items()
        if key.startswith(prefix) and (role is None or entry.get("role") == role)
    )


def _entry(manifest: dict[str, Any], name: str, domain: str) -> dict[str, Any]:
    key = f"{domain}/{name}"
    try:
        return manifest["models"][key]
    except KeyError:
        known = sorted(k.split("/", 1)[1] for k in manifest["models"] if k.startswith(f"{domain}/"))
        raise ReferenceModelError(
            f"unknown reference model {key!r}; the {domain} models are {known}"
        ) from None


def model_entry(name: str, domain: str = "morpho") -> dict[str, Any]:
    """The manifest entry of a bundled model (a copy: edits do not leak into the registry)."""
    return json.loads(json.dumps(_entry(load_manifest(), name, domain)))


def _verified_sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _VERIFIED:
        _VERIFIED[key] = file_sha256(path)
    return _VERIFIED[key]


def verify_file(path: Path, expected: str, name: str) -> None:
    """Raises :class:`ReferenceModelError` unless ``path`` exists and hashes to ``expected``."""
    fix = f"restore the file from the cfcheck release or regenerate it with `cfcheck retrain --only {name}`"
    if not path.is_file():
        raise ReferenceModelError(
            f"weights file {path} for reference model {name!r} is missing "
            f"(expected sha256 {expected}); {fix}"
        )
    actual = _verified_sha256(path)
    if actual != expected:
        raise ReferenceModelError(
            f"weights file {path} does not match the manifest: expected sha256 {expected}, "
            f"actual {actual}; the file is corrupted or was modified — {fix}"
        )


def load_model(
    name: str,
    domain: str = "morpho",
    device: str | torch.device = "cpu",
    weights_dir: str | os.PathLike[str] | None = None,
) -> nn.Module:
    """A verified, frozen reference model in eval mode on ``device``.

    The file's sha256 is checked against the manifest *before* it is parsed. ``weights_dir``
    points at another folder of weights; its own ``manifest.json`` is used when it has one,
    otherwise the bundled manifest (so a copied weight file is checked against the release).
    """
    from safetensors.torch import load_file

    folder, manifest = _resolve(weights_dir)
    entry = _entry(manifest, name, domain)
    path = folder / entry["file"]
    verify_file(path, entry["sha256"], name)
    model = build_model(entry["architecture"], **entry["arch_kwargs"])
    state = load_file(str(path), device="cpu")
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        raise ReferenceModelError(
            f"weights file {path} does not fit architecture {entry['architecture']!r} "
            f"{entry['arch_kwargs']}: {error}"
        ) from error
    model.eval().to(device)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model
