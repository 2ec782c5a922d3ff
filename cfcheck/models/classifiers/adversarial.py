"""Projected gradient descent (Madry et al.) for adversarial training and robust accuracy.

L2 PGD is the default because L2-robust classifiers have perceptually aligned gradients,
which is what makes them useful for counterfactual guidance (the "Madry" model of Väth et
al.). Images stay in [0, 1]; the perturbation is projected onto the eps-ball after every
step and the result clamped to the valid pixel range.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["pgd_attack", "robust_accuracy"]

_NORMS = ("l2", "linf")


def _per_sample_l2(t: torch.Tensor) -> torch.Tensor:
    return t.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *([1] * (t.ndim - 1)))


def _project(delta: torch.Tensor, eps: float, norm: str) -> torch.Tensor:
    if norm == "linf":
        return delta.clamp(-eps, eps)
    factor = (eps / _per_sample_l2(delta)).clamp(max=1.0)
    return delta * factor


def _random_start(x: torch.Tensor, eps: float, norm: str, generator: torch.Generator | None) -> torch.Tensor:
    # drawn on the generator's device, so a CPU generator gives the same start everywhere
    device = generator.device if generator is not None else torch.device("cpu")
    if norm == "linf":
        return (torch.rand(x.shape, generator=generator, device=device, dtype=x.dtype) * 2 - 1) * eps
    # a Gaussian direction scaled to a uniform radius inside the L2 ball
    noise = torch.randn(x.shape, generator=generator, device=device, dtype=x.dtype)
    radius = torch.rand(x.shape[0], generator=generator, device=device, dtype=x.dtype).view(-1, 1, 1, 1)
    return noise / _per_sample_l2(noise) * eps * radius


def pgd_attack(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    eps: float,
    steps: int,
    norm: str = "l2",
    step_size: float | None = None,
    random_start: bool = False,
    generator: torch.Generator | None = None,
    targeted: bool = False,
) -> torch.Tensor:
    """PGD within the ``norm`` ball of radius ``eps``: untargeted (maximise cross-entropy to
    ``labels``), or with ``targeted=True`` minimise it so ``labels`` are the targets.

    ``step_size`` defaults to 2.5·eps/steps (Madry et al.). The model's train/eval mode is
    left untouched so a caller can attack a model in either mode. Returns detached images.
    """
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}")
    if eps < 0 or steps < 0:
        raise ValueError(f"eps and steps must be non-negative, got eps={eps}, steps={steps}")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"images and labels disagree on batch size: {images.shape[0]} vs {labels.shape[0]}")
    if eps == 0 or steps == 0:
        return images.detach().clone()
    alpha = 2.5 * eps / steps if step_size is None else step_size
    x = images.detach()
    delta = torch.zeros_like(x)
    if random_start:
        delta = _random_start(x, eps, norm, generator).to(x.device)
        delta = (x + delta).clamp(0, 1) - x
    params = list(model.parameters())
    saved = [p.requires_grad for p in params]
    for p in params:  # gradients w.r.t. the input only: saves the weight-grad work
        p.requires_grad_(False)
    try:
        for _ in range(steps):
            with torch.enable_grad():  # callers may sit inside torch.no_grad()
                delta.requires_grad_(True)
                loss = F.cross_entropy(model(x + delta), labels)
                (grad,) = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                step = alpha * grad.sign() if norm == "linf" else alpha * grad / _per_sample_l2(grad)
                if targeted:
                    step = -step
                delta = _project(delta + step, eps, norm)
                delta = (x + delta).clamp(0, 1) - x
    finally:
        for p, flag in zip(params, saved):
            p.requires_grad_(flag)
    return (x + delta).detach()


@torch.no_grad()
def _predict(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x).argmax(dim=1)


def robust_accuracy(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    eps: float,
    steps: int = 20,
    norm: str = "l2",
    batch_size: int = 250,
) -> float:
    """Accuracy under a deterministic PGD-``steps`` attack (no random start)."""
    correct = 0
    for start in range(0, images.shape[0], batch_size):
        x = images[start : start + batch_size]
        y = labels[start : start + batch_size]
        x_adv = pgd_attack(model, x, y, eps=eps, steps=steps, norm=norm)
        correct += int((_predict(model, x_adv) == y).sum())
    return correct / max(images.shape[0], 1)
