"""The model roles the SCM suites read, on any domain with a structural causal model.

* ``anticausal_predictors`` — read each parent off an image (effectiveness, causal-graph
  compliance). A model's store entry names what it reads: ``attribute`` (one parent; its output
  is that parent's reading) or ``attributes`` (a list: a multi-head model whose ``forward``
  returns a dict parent → reading). A reading is N×k logits (or one logit per image for a binary
  parent, positive meaning 1) for a categorical parent, N (or N×1) values for a continuous one.
* ``embedding`` — realism (FID and KID) and the perceptual distance; also the composition
  embedding where the predictors give no features of their own.
* ``minimality_vae`` — CLD (``encode(x)`` gives the posterior mean and log-variance).

A role the domain does not declare skips the scores that need it, each with one line saying which
role is missing and what it is for (:func:`predictor_missing`, :func:`embedding_missing`).

The composition embedding is the anti-causal predictors' last hidden layers, concatenated in parent
order, where every predictor has ``features(x)`` (Melistas et al.'s embedding on their digit data set);
otherwise the domain embedding's features (their embedding on CelebA is a pretrained network's).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

__all__ = [
    "composition_embedding",
    "embedding_missing",
    "predictor_heads",
    "predictor_missing",
    "read_parent",
    "reading_values",
]

_HEADS: weakref.WeakKeyDictionary[Any, dict[str, tuple[str, str | None]]] = weakref.WeakKeyDictionary()


def predictor_heads(zoo: Any) -> dict[str, tuple[str, str | None]]:
    """Parent → (model name, the key of its head in a multi-head model's output dict, or None) of
    the domain's ``anticausal_predictors``.

    Raises:
        ValueError: for an entry that names neither ``attribute`` nor ``attributes``, a parent the
            domain does not have, or a parent read by two models.
    """
    if zoo in _HEADS:
        return _HEADS[zoo]
    domain = zoo.domain
    factors = tuple(getattr(domain, "factor_names", ()))
    heads: dict[str, tuple[str, str | None]] = {}
    for name in zoo.role("anticausal_predictors"):
        entry = zoo.store.entry(name)
        single, several = entry.get("attribute"), entry.get("attributes")
        if (single is None) == (several is None) or (several is not None and not isinstance(several, (list, tuple))):
            raise ValueError(
                f"anti-causal predictor {name!r} of domain {domain.name!r}: its store entry must name what it reads, "
                "either attribute='<parent>' (one reading) or attributes=[...] (a dict of readings), "
                f"got attribute={single!r}, attributes={several!r}"
            )
        read = [(str(single), None)] if single is not None else [(str(p), str(p)) for p in several or ()]
        for parent, head in read:
            if parent not in factors:
                raise ValueError(
                    f"anti-causal predictor {name!r} of domain {domain.name!r} reads {parent!r}, which is not one "
                    f"of the domain's parents {list(factors)}"
                )
            if parent in heads:
                raise ValueError(
                    f"domain {domain.name!r}: {parent!r} is read by two anti-causal predictors, "
                    f"{heads[parent][0]!r} and {name!r}; expected one"
                )
            heads[parent] = (name, head)
    _HEADS[zoo] = heads
    return heads


def predictor_missing(zoo: Any, parent: str) -> str | None:
    """Why ``parent`` cannot be read by an anti-causal predictor (None: it can)."""
    if parent in predictor_heads(zoo):
        return None
    return (
        f"domain {zoo.domain.name!r} declares no anti-causal predictor of {parent!r} (role 'anticausal_predictors': "
        "a model whose store entry names the attribute it reads)"
    )


def embedding_missing(zoo: Any, needed_by: str) -> str | None:
    """Why the domain embedding cannot serve ``needed_by`` (None: it can)."""
    if zoo.role("embedding"):
        return None
    return f"domain {zoo.domain.name!r} declares no 'embedding' model (the domain embedding network), which {needed_by} needs"


def reading_values(parent: str, out: torch.Tensor, categorical: bool, model: str) -> torch.Tensor:
    """A predictor's reading as values: int64 codes (argmax of N×k logits, or a single logit > 0)
    for a categorical parent; float values (N, or the first column of N×1) for a continuous one.

    Raises:
        ValueError: naming the model and parent for a reading of another shape.
    """
    if categorical:
        if out.ndim == 2 and out.shape[1] > 1:
            return out.argmax(1)
        if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1):
            return (out.reshape(-1) > 0).long()
    elif out.ndim == 1 or (out.ndim == 2 and out.shape[1] >= 1):
        return (out if out.ndim == 1 else out[:, 0]).float()
    expected = "N×k logits (or N single logits of a binary parent)" if categorical else "N values (or N×1)"
    raise ValueError(
        f"anti-causal predictor {model!r} gives a reading of {parent!r} of shape {tuple(out.shape)}; expected {expected}"
    )


def read_parent(zoo: Any, parent: str, images: torch.Tensor) -> torch.Tensor:
    """``parent`` read off ``images`` by its anti-causal predictor (:func:`reading_values`), on the CPU.

    Raises:
        KeyError: when no predictor reads ``parent`` (:func:`predictor_missing` says why).
        ValueError: for a multi-head output without the parent's key, or a reading of a wrong shape.
    """
    heads = predictor_heads(zoo)
    if parent not in heads:
        raise KeyError(predictor_missing(zoo, parent))
    name, head = heads[parent]
    categorical = parent in zoo.domain.categorical_factors
    if len(images) == 0:
        return torch.empty(0, dtype=torch.long if categorical else torch.float32)
    out: Any = zoo.logits(name, images)
    if head is not None:
        if not isinstance(out, dict) or head not in out:
            found = sorted(out) if isinstance(out, dict) else f"a {type(out).__name__}"
            raise ValueError(
                f"anti-causal predictor {name!r} reads {parent!r} as one of several heads, so its forward must return "
                f"a dict with the key {head!r}; it returned {found}"
            )
        out = out[head]
    return reading_values(parent, out.cpu(), categorical, name)


def _predictor_features(zoo: Any) -> bool:
    heads = predictor_heads(zoo)
    return bool(heads) and all(
        head is None and callable(getattr(zoo[name], "features", None)) for name, head in heads.values()
    )


def composition_embedding(zoo: Any, images: torch.Tensor) -> torch.Tensor:
    """The embedding composition's L1 compares (see the module docstring), N×D float64.

    Raises:
        KeyError: naming the missing roles when the domain has neither predictors with features nor
            an embedding.
    """
    if _predictor_features(zoo):
        features: torch.Tensor = zoo.predictor_embedding(images)
        return features
    reason = embedding_missing(zoo, "the composition embedding (where the anti-causal predictors give no features)")
    if reason is not None:
        raise KeyError(reason)
    if len(images) == 0:
        return torch.empty(0, 0, dtype=torch.float64)
    raw: torch.Tensor = zoo.features(images)
    return raw
