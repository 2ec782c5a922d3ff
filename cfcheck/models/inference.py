"""Batched, gradient-free inference: the one loop that feeds a model its inputs in chunks.

Every place that needs a model's outputs on many inputs (the session's model zoo, the
reference methods' validity checks, the training code's evaluation) calls
:func:`batched_logits` (or :func:`batched_apply` for a function with several outputs), so
chunking, device placement and dtype are handled the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

__all__ = ["batched_apply", "batched_logits", "model_device"]

Outputs = torch.Tensor | dict[str, torch.Tensor]


def model_device(model: nn.Module, default: torch.device | str | None = None) -> torch.device | None:
    """The device of ``model``'s first parameter (else first buffer), else ``default``."""
    for tensor in model.parameters():
        return tensor.device
    for tensor in model.buffers():
        return tensor.device
    return torch.device(default) if default is not None else None


def _check(images: torch.Tensor, batch_size: int) -> None:
    if not isinstance(images, torch.Tensor):
        raise TypeError(f"Expected `images` to be a torch.Tensor, but got {type(images).__name__}.")
    if images.ndim == 0:
        raise ValueError("Expected `images` to have a batch dimension, but got a 0-d tensor.")
    if images.shape[0] == 0:
        raise ValueError(
            f"Expected at least one input, but got an empty batch of shape {tuple(images.shape)}; "
            "callers that may have none must check before calling."
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"Expected `batch_size` to be a positive int, but got {batch_size!r}.")


@torch.no_grad()
def batched_apply(
    fn: Callable[[torch.Tensor], Outputs],
    images: torch.Tensor,
    *,
    batch_size: int = 512,
    device: torch.device | str | None = None,
) -> Outputs:
    """``fn`` applied to ``images`` in chunks without autograd, results float32 on the CPU.

    Args:
        fn: maps a chunk (N×...) to a tensor N×... or to a dict of such tensors (e.g. the
            logits of every head of a multi-head network).
        images: inputs, first dimension the batch; at least one.
        batch_size: inputs per chunk.
        device: where each chunk is moved before ``fn`` sees it; ``None`` leaves it where it is.

    Returns:
        The concatenated outputs (a tensor, or a dict of tensors with ``fn``'s keys), float32,
        on the CPU.

    Raises:
        ValueError: if ``images`` is empty (this function never returns an empty result) or
            ``batch_size`` is not a positive int.
    """
    _check(images, batch_size)
    target = torch.device(device) if device is not None else None
    parts: list[Outputs] = []
    for start in range(0, images.shape[0], batch_size):
        chunk = images[start:start + batch_size]
        out = fn(chunk.to(target) if target is not None else chunk)
        if isinstance(out, dict):
            parts.append({name: value.float().cpu() for name, value in out.items()})
        else:
            parts.append(out.float().cpu())
    if isinstance(parts[0], dict):
        return {name: torch.cat([part[name] for part in parts]) for name in parts[0]}
    return torch.cat(parts)


def batched_logits(
    model: nn.Module,
    images: torch.Tensor,
    *,
    batch_size: int = 512,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """A model's outputs (logits, features) on ``images``, computed in chunks without autograd.

    The model is called as it is (its train/eval mode is not changed).

    Args:
        model: any ``nn.Module`` mapping N×... inputs to an N×... tensor.
        images: inputs, first dimension the batch; at least one.
        batch_size: inputs per chunk (bounds peak memory).
        device: where chunks are moved; ``None``: the model's device (its first parameter or
            buffer), or, for a model without either, the device ``images`` are on.

    Returns:
        The outputs of all inputs, float32, on the CPU.

    Raises:
        ValueError: if ``images`` is empty: there is no output shape to return, so callers
            that may have no inputs check first.

    Example:
        >>> net = nn.Linear(4, 3)
        >>> batched_logits(net, torch.rand(1000, 4), batch_size=256).shape
        torch.Size([1000, 3])
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"Expected `model` to be a torch.nn.Module, but got {type(model).__name__}.")
    if device is None:
        device = model_device(model)
    return batched_apply(model, images, batch_size=batch_size, device=device)
