"""Training reference models into a domain folder: one loop for every role.

:func:`train_into_folder` owns what every retraining shares: the folder (the bundled one by
default, never for a smoke run), the torch thread count (recorded per entry, so CPU results do
not depend on the machine's cores), and writing the manifest and the model cards after every
model, so an interrupted run keeps what it finished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from .model_cards import write_model_cards
from .registry import domain_dir, update_manifest

__all__ = ["train_into_folder"]


def train_into_folder(
    domain: str,
    names: Sequence[str],
    train_one: Callable[[str, Path], dict[str, Any]],
    out_dir: str | Path | None = None,
    *,
    smoke: bool = False,
    num_threads: int | None = 1,
) -> dict[str, dict[str, Any]]:
    """Runs ``train_one(name, folder) -> manifest entry`` for each name; returns the new entries.

    Raises:
        ValueError: for a smoke run without ``out_dir`` (it must not overwrite the bundled
            weights) or a ``num_threads`` that is not a positive int or None.
    """
    if out_dir is None:
        if smoke:
            raise ValueError("smoke training needs an explicit out_dir; it must not overwrite the bundled weights")
        out_dir = domain_dir(domain)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    previous_threads = torch.get_num_threads()
    if num_threads is not None:
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")
        torch.set_num_threads(num_threads)
    entries: dict[str, dict[str, Any]] = {}
    try:
        for name in names:
            entry = train_one(name, out_dir)
            entry["num_threads"] = torch.get_num_threads()
            entries[f"{domain}/{name}"] = entry
            manifest = update_manifest(out_dir, entries)
            write_model_cards({"models": {k: manifest["models"][k] for k in entries}}, out_dir)
    finally:
        torch.set_num_threads(previous_threads)
    return entries
