"""Targets, predictions and the measured quality of reference models.

Shared by training (model selection, the manifest's ``quality``) and by the project's tests,
which re-measure every shipped model against its ``quality_bar``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .adversarial import robust_accuracy
from .recipes import ModelSpec

__all__ = [
    "bar_violations",
    "head_logits",
    "main_accuracy",
    "measure_quality",
    "predict",
    "task_targets",
]

_MULTITASK_HEADS = ("digit", "thickness", "intensity", "font")


def task_targets(task: str, data: Any) -> dict[str, torch.Tensor]:
    """Integer targets of ``task`` for a morpho ``LabeledImages``: head name -> labels.

    Single-task models have one head, ``"label"``; the embedding has one per attribute.
    """
    from cfcheck.domains.morpho import intensity_bin, thickness_bin

    by_attribute = {
        "digit": lambda: data.labels.long(),
        "thickness": lambda: thickness_bin(data.factors.thickness).long(),
        "intensity": lambda: intensity_bin(data.factors.intensity).long(),
        "font": lambda: data.factors.font.long(),
    }
    single = {"digit": "digit", "thickness_bin": "thickness", "intensity_bin": "intensity",
              "font": "font"}
    if task == "multitask":
        return {name: by_attribute[name]() for name in _MULTITASK_HEADS}
    if task not in single:
        raise ValueError(f"unknown task {task!r}; expected one of {sorted(single) + ['multitask']}")
    return {"label": by_attribute[single[task]]()}


def head_logits(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Logits per head: a classifier's output as ``"label"``, or the embedding's heads."""
    if hasattr(model, "head_logits"):
        return model.head_logits(x)
    return {"label": model(x)}


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor, batch_size: int = 1000) -> dict[str, torch.Tensor]:
    """Predicted class per head for ``images`` (model left in whatever mode it is in)."""
    parts: dict[str, list[torch.Tensor]] = {}
    device = next(model.parameters()).device
    for start in range(0, images.shape[0], batch_size):
        logits = head_logits(model, images[start:start + batch_size].to(device))
        for name, value in logits.items():
            parts.setdefault(name, []).append(value.argmax(dim=1).cpu())
    return {name: torch.cat(values) for name, values in parts.items()}


def _accuracies(model: nn.Module, images: torch.Tensor, targets: dict[str, torch.Tensor]) -> dict[str, float]:
    predictions = predict(model, images)
    # exact count / n: the manifest then holds the same decimal a reader recomputes
    return {name: int((predictions[name] == y).sum()) / len(y) for name, y in targets.items()}


def main_accuracy(model: nn.Module, images: torch.Tensor, targets: dict[str, torch.Tensor]) -> float:
    """Accuracy of the head that defines model selection (the digit head for the embedding)."""
    accuracies = _accuracies(model, images, targets)
    return accuracies["label"] if "label" in accuracies else accuracies["digit"]


def measure_quality(model: nn.Module, spec: ModelSpec, test_data: Any) -> dict[str, Any]:
    """The manifest's ``quality`` block: test accuracy per head, robust accuracy if asked.

    ``test_accuracy`` is always the main head (digit for the embedding); attribute bins also
    report the majority-class rate so noisy bins can be judged against chance.
    """
    was_training = model.training
    model.eval()
    try:
        targets = task_targets(spec.task, test_data)
        accuracies = _accuracies(model, test_data.images, targets)
        quality: dict[str, Any] = {"test_n": int(test_data.images.shape[0])}
        if spec.task == "multitask":
            quality["test_accuracy"] = accuracies["digit"]
            for name, value in accuracies.items():
                if name != "digit":
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
                model, test_data.images[:n].to(device), targets["label"][:n].to(device),
                eps=float(cfg["eps"]), steps=int(cfg["steps"]), norm=str(cfg["norm"]),
            )
            quality.update({f"robust_{k}": v for k, v in cfg.items()})
        return quality
    finally:
        model.train(was_training)


def bar_violations(quality: dict[str, Any], bar: dict[str, dict[str, float]]) -> list[str]:
    """Human-readable list of every quality-bar bound that ``quality`` misses (empty: passes)."""
    problems = []
    for metric, bounds in bar.items():
        if metric not in quality:
            problems.append(f"{metric}: not measured")
            continue
        value = float(quality[metric])
        if "min" in bounds and value < bounds["min"]:
            problems.append(f"{metric}={value:.4f} < min {bounds['min']}")
        if "max" in bounds and value > bounds["max"]:
            problems.append(f"{metric}={value:.4f} > max {bounds['max']}")
    return problems
