"""Targets, predictions and the measured quality of reference models.

Shared by training (model selection, the manifest's ``quality``) and by the project's tests,
which re-measure every shipped model against its ``quality_bar``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import torch
from torch import nn

from cfcheck.core.thresholds import bar_violations

from ..inference import batched_apply, model_device
from .adversarial import robust_accuracy
from .recipes import ModelSpec, domain_recipes

if TYPE_CHECKING:
    from ..capabilities import ModelDomain

__all__ = [
    "bar_violations",  # re-exported from cfcheck.core.thresholds: the one notion of a bar
    "head_logits",
    "main_accuracy",
    "main_head",
    "measure_quality",
    "predict",
    "prediction_distribution",
    "task_targets",
]

#: quality keys of the predicted-class distribution (measured when a bar or calibration asks)
DISTRIBUTION_KEYS = ("class_shares", "max_class_share", "prediction_entropy_bits")


def task_targets(task: str, data: Any, *, domain: ModelDomain | None) -> dict[str, torch.Tensor]:
    """Integer targets of ``task`` for a split of ``domain`` (the domain object): head name -> labels.

    The domain defines them (``ModelRecipes.targets``): single-task models have one head,
    ``"label"``; a multi-head model (the embedding) one per attribute, its main head first.

    Raises:
        ValueError: without a domain, or where the domain gives no targets for ``task``.
    """
    if domain is None:
        raise ValueError(
            f"task {task!r} names no domain to take its targets from; build the spec with "
            "cfcheck.models.classifiers.recipes.model_specs(domain)"
        )
    targets = domain_recipes(domain).targets(task, data)
    if not targets:
        raise ValueError(f"domain {domain.name!r} gave no targets for task {task!r}")
    return targets


def main_head(heads: Iterable[str]) -> str:
    """The head that defines a model's accuracy: ``"label"``, else the first head."""
    heads = list(heads)
    return "label" if "label" in heads else heads[0]


@runtime_checkable
class _Heads(Protocol):
    def head_logits(self, x: torch.Tensor) -> dict[str, torch.Tensor]: ...


def head_logits(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Logits per head: a classifier's output as ``"label"``, or the embedding's heads."""
    if isinstance(model, _Heads):  # has a head_logits attribute
        return model.head_logits(x)
    return {"label": model(x)}


def predict(model: nn.Module, images: torch.Tensor, batch_size: int = 1000) -> dict[str, torch.Tensor]:
    """Predicted class per head for ``images`` (model left in whatever mode it is in)."""
    logits = batched_apply(lambda x: head_logits(model, x), images, batch_size=batch_size, device=model_device(model))
    return {name: value.argmax(dim=1) for name, value in logits.items()}


def _accuracies(model: nn.Module, images: torch.Tensor, targets: dict[str, torch.Tensor]) -> dict[str, float]:
    predictions = predict(model, images)
    # exact count / n: the manifest then holds the same decimal a reader recomputes
    return {name: int((predictions[name] == y).sum()) / len(y) for name, y in targets.items()}


def main_accuracy(model: nn.Module, images: torch.Tensor, targets: dict[str, torch.Tensor]) -> float:
    """Accuracy of the head that defines model selection (:func:`main_head`)."""
    accuracies = _accuracies(model, images, targets)
    return accuracies[main_head(targets)]


def prediction_distribution(predictions: torch.Tensor, num_classes: int) -> dict[str, Any]:
    """How predicted classes spread: share per class, largest share, entropy in bits.

    A classifier that predicts one class for every input has max share 1 and entropy 0; a
    uniform spread over K classes has 1/K and log2 K.
    """
    if predictions.numel() == 0:
        raise ValueError("no predictions")
    counts = torch.bincount(predictions.long().flatten(), minlength=num_classes).double()
    shares = counts / counts.sum()
    nonzero = shares[shares > 0]
    return {
        "class_shares": [round(float(v), 4) for v in shares],
        "max_class_share": int(counts.max()) / int(counts.sum()),
        "prediction_entropy_bits": round(float(-(nonzero * nonzero.log2()).sum()), 4),
    }


def measure_quality(model: nn.Module, spec: ModelSpec, test_data: Any) -> dict[str, Any]:
    """The manifest's ``quality`` block: test accuracy per head, robust accuracy if asked.

    ``test_accuracy`` is always the main head (:func:`main_head`); single-head models also
    report the majority-class rate so noisy bins can be judged against chance. Models with a
    logit calibration (or a bar on the distribution) report how their predictions spread
    (:func:`prediction_distribution`); models with a ``transfer_eval`` report the targeted-PGD
    transfer rate from the (bundled) explained classifier it names.
    """
    was_training = model.training
    model.eval()
    try:
        targets = task_targets(spec.task, test_data, domain=spec.domain)
        main = main_head(targets)
        accuracies = _accuracies(model, test_data.images, targets)
        quality: dict[str, Any] = {"test_n": int(test_data.images.shape[0])}
        if main != "label":  # a multi-head model: the main head, then the others by name
            quality["test_accuracy"] = accuracies[main]
            for name, value in accuracies.items():
                if name != main:
                    quality[f"{name}_accuracy"] = value
        else:
            quality["test_accuracy"] = accuracies["label"]
            counts = torch.bincount(targets["label"])
            quality["majority_class_rate"] = float(counts.max()) / float(counts.sum())
        if spec.robust_eval is not None:
            cfg = spec.robust_eval
            n = min(int(cfg["n"]), test_data.images.shape[0])
            device = next(model.parameters()).device
            quality["robust_accuracy"] = robust_accuracy(
                model,
                test_data.images[:n].to(device),
                targets["label"][:n].to(device),
                eps=float(cfg["eps"]),
                steps=int(cfg["steps"]),
                norm=str(cfg["norm"]),
            )
            quality.update({f"robust_{k}": v for k, v in cfg.items()})
        if spec.logit_calibration is not None or set(DISTRIBUTION_KEYS) & set(spec.quality_bar):
            predicted = predict(model, test_data.images)[main]
            num_classes = int(spec.arch_kwargs.get("num_classes", 0)) or int(predicted.max()) + 1
            quality.update(prediction_distribution(predicted, num_classes))
        if spec.transfer_eval is not None:
            from .transfer import adversarial_transfer

            cfg = dict(spec.transfer_eval)
            assert spec.domain is not None  # task_targets above raised otherwise
            rates = adversarial_transfer(
                int(cfg["n"]),
                eps=float(cfg["eps"]),
                steps=int(cfg["steps"]),
                seed=int(cfg["seed"]),
                source=str(cfg["source"]),
                evaluated=[spec.name],
                models={spec.name: model},
                domain=spec.domain,
            )
            quality["transfer_target_rate"] = rates[spec.name]
            quality["transfer_source_rate"] = rates[str(cfg["source"])]
            quality["transfer_committee_majority_rate"] = rates["committee_majority"]
            quality.update({f"transfer_{k}": v for k, v in cfg.items()})
        return quality
    finally:
        model.train(was_training)
