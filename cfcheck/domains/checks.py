"""What ``suites/test_domains.py`` checks of a domain before its scores can be trusted."""

from __future__ import annotations

from typing import Any

import torch

from cfcheck.models.zoo import BatchedSplit


class DomainWarning(UserWarning):
    """A load-check finding that leaves the domain usable: some of its scores are skipped, with the
    reason this warning gives (``test_domain_loads`` issues it; pytest lists it in its warnings
    summary)."""


#: images per split read for the check (the first ones: cheap for lazily read data)
SAMPLE = 256


#: the model roles whose outputs are class scores: their width must be the domain's class count
CLASS_SCORE_ROLES = ("explained", "oracles", "robust")


def domain_problems(domain: Any, zoo: Any = None) -> list[str]:
    """Readable problems of ``domain`` (empty: none): what its sources report of every file
    (``data_problems()``, where the domain has it: an unreadable image, one of another size, an empty
    class folder); what ``attribute_problems()`` reports where the domain declares attributes (a
    mechanism that cannot be fitted or does not invert on the table's first rows); each split role's split exists, holds one int64 label per input, labels in
    [0, num_classes), finite inputs of ``input_shape`` (images, C×H×W, in [0, 1]) among its first
    inputs; every model the role map names is in the store, its weights match their sha256 and its
    builder imports (:meth:`cfcheck.models.store.Store.check`); and, given the run's ``zoo``, every
    classifier of :data:`CLASS_SCORE_ROLES` gives one score per class on two of those inputs.

    Args:
        domain: the domain object.
        zoo: its model zoo (:class:`cfcheck.models.zoo.ModelZoo`); None skips the classifiers' outputs.

    Returns:
        One line per problem, naming the split, file or model and what was expected.
    """
    data_problems = getattr(domain, "data_problems", None)
    problems = list(data_problems()) if callable(data_problems) else []
    attribute_problems = getattr(domain, "attribute_problems", None)  # a domain with declared attributes
    problems += list(attribute_problems()) if callable(attribute_problems) else []
    sample: torch.Tensor | None = None
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
        if role == "scored" and images.numel():
            sample = images[:2]
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
    loadable = set()
    for name in sorted({n for names in domain.model_roles.values() for n in names} & known):
        try:
            store.check(name)
            loadable.add(name)
        except Exception as error:  # noqa: BLE001
            problems.append(f"model {name!r}: {error}")
    if zoo is not None and sample is not None and not problems:
        problems += _class_score_problems(domain, zoo, sample, loadable)
    return problems


def _class_score_problems(domain: Any, zoo: Any, sample: torch.Tensor, names: set[str]) -> list[str]:
    """Each classifier of :data:`CLASS_SCORE_ROLES` run on ``sample``: one score per class of the domain."""
    problems = []
    for role in CLASS_SCORE_ROLES:
        for name in domain.model_roles.get(role, ()):
            if name not in names:
                continue
            try:
                model = zoo[name]
                with torch.no_grad():
                    out = model(sample.to(zoo.device))
            except Exception as error:  # noqa: BLE001 - the user's network: reported, not raised
                problems.append(f"model {name!r} ({role}) fails on two scored images: {type(error).__name__}: {error}")
                continue
            if out.ndim != 2 or out.shape[1] != domain.num_classes:
                classes = ", ".join(map(repr, domain.class_names))
                problems.append(
                    f"model {name!r} ({role}) gives outputs of shape {tuple(out.shape)} for 2 images, but the domain "
                    f"has {domain.num_classes} classes ({classes}): expected 2×{domain.num_classes} class scores "
                    "(an empty or extra class folder shifts the classes)"
                )
    return problems


def _first(domain: Any, name: str) -> Any:
    """The split's first :data:`SAMPLE` inputs (all of a smaller split), without reading the rest."""
    try:
        return domain.split(name, n=SAMPLE)
    except ValueError:  # a split smaller than the sample
        return domain.split(name)


#: the specs whose load check passed in this process: ``cfcheck calibrate --domain`` checks the domain
#: before choosing the kind, and the kind's calibration (also a library function) checks it again
_USABLE: set[str] = set()


def require_usable(spec: str) -> None:
    """Resolve the domain ``spec`` names and run its load check (:func:`domain_problems`, the
    classifiers' outputs included) before a calibration runs any control on it; a spec that
    passed once in this process is not checked again.

    Raises:
        ValueError: where it cannot be resolved (a DomainError naming the spec).
        RuntimeError: naming the domain and each problem its load check found.
    """
    from cfcheck.domains import get_domain
    from cfcheck.models.zoo import ModelZoo

    if spec in _USABLE:
        return
    domain = get_domain(spec)
    problems = domain_problems(domain)
    if not problems:  # the classifiers are worth running only once every model loads
        problems = domain_problems(domain, ModelZoo(domain, "cpu"))
    if problems:
        raise RuntimeError(
            f"domain {domain.name!r} ({spec}) cannot be used, so no control was run and no bar written: "
            + "; ".join(problems)
        )
    _USABLE.add(spec)
