"""What ``suites/test_domains.py`` checks of a domain before its scores can be trusted."""

from __future__ import annotations

from typing import Any

import torch

from cfcheck.models.zoo import BatchedSplit

#: images per split read for the check (the first ones: cheap for lazily read data)
SAMPLE = 256


def domain_problems(domain: Any) -> list[str]:
    """Readable problems of ``domain`` (empty: none): each split role's split exists, holds one int64
    label per input, labels in [0, num_classes), finite inputs of ``input_shape`` (images, C×H×W, in
    [0, 1]) among its first inputs; every model the role map names is in the store, its weights match
    their sha256 and its builder imports (:meth:`cfcheck.models.store.Store.check`; building every
    network would cost seconds per run)."""
    problems = []
    for role, name in domain.split_roles.items():
        try:
            data = _first(domain, name)
            labels = torch.as_tensor(data.labels)
            count = min(SAMPLE, len(labels))
            images = (
                next(iter(data.batches(count)), torch.empty(0, *domain.input_shape))
                if isinstance(data, BatchedSplit)
                else data.images[:count]
            )
        except Exception as error:  # noqa: BLE001 - reported, not raised
            problems.append(f"split {name!r} ({role}) cannot be read: {type(error).__name__}: {error}")
            continue
        where = f"split {name!r} ({role})"
        if labels.ndim != 1 or labels.dtype != torch.int64:
            problems.append(f"{where}: labels must be 1-D int64, got {tuple(labels.shape)} {labels.dtype}")
        elif len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= domain.num_classes):
            problems.append(f"{where}: labels must lie in [0, {domain.num_classes - 1}]")
        if tuple(images.shape[1:]) != tuple(domain.input_shape):
            problems.append(f"{where}: images are {tuple(images.shape[1:])}, the domain declares {domain.input_shape}")
        if images.numel() and not bool(torch.isfinite(images).all()):
            problems.append(f"{where}: inputs must be finite")
        elif images.numel() and len(domain.input_shape) == 3 and (float(images.min()) < 0 or float(images.max()) > 1):
            problems.append(
                f"{where}: images (C×H×W inputs) must lie in [0, 1], found {float(images.min()):.4g}.."
                f"{float(images.max()):.4g}"
            )
    store = domain.model_store
    known = set(store.names())
    for role, names in domain.model_roles.items():
        for name in names:
            if name not in known:
                problems.append(
                    f"role {role!r} names model {name!r}, which the store does not hold (it holds {sorted(known)})"
                )
    for name in sorted({n for names in domain.model_roles.values() for n in names} & known):
        try:
            store.check(name)
        except Exception as error:  # noqa: BLE001
            problems.append(f"model {name!r}: {error}")
    return problems


def _first(domain: Any, name: str) -> Any:
    """The split's first :data:`SAMPLE` inputs (all of a smaller split), without reading the rest."""
    try:
        return domain.split(name, n=SAMPLE)
    except ValueError:  # a split smaller than the sample
        return domain.split(name)
