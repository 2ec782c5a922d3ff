"""A fixed, label-free affine on a classifier's logits (:class:`LogitStandardisation`), a wrapper that
adds one to any classifier (:class:`StandardisedLogits`), and its fit on unlabelled images
(:func:`calibrate_logits`). An untrained network (the random baseline, the randomisation cascade's
stages) predicts one class for every input until its logits are standardised."""

from __future__ import annotations

import torch
from torch import nn

from ..inference import batched_logits

__all__ = ["LogitStandardisation", "StandardisedLogits", "calibrate_logits"]


class LogitStandardisation(nn.Module):
    """A fixed per-class affine on logits, ``(logits − mean) / std + bias``, stored as buffers.

    Calibrated without labels by :func:`calibrate_logits`: ``mean`` and ``std`` are each
    logit's statistics over unlabelled images; the optional ``bias`` balances the classes,
    i.e. makes each class the arg-max for an equal share of those images. An untrained
    network's logits share a large image-independent offset that makes it predict one class
    for every input; standardising removes the offset, and balancing removes what remains of
    the preference for classes whose logits correlate least with the others. No label is
    used, so the affine carries no class information. Identity until calibrated.
    """

    mean: torch.Tensor  # a buffer (register_buffer)
    std: torch.Tensor  # a buffer (register_buffer)
    bias: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(num_classes))
        self.register_buffer("std", torch.ones(num_classes))
        self.register_buffer("bias", torch.zeros(num_classes))

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        return (logits - self.mean) / self.std + self.bias

    def reset(self) -> None:
        """Back to the identity."""
        self.mean.zero_()
        self.std.fill_(1.0)
        self.bias.zero_()

    @torch.no_grad()
    def set_statistics(
        self,
        raw_logits: torch.Tensor,
        balance: bool = False,
        min_std: float = 1e-12,
    ) -> None:
        """Fits the affine to ``raw_logits`` (N×K, N ≥ 2), the network's own output on
        unlabelled images; with ``balance`` also the class-balancing ``bias``."""
        k = self.mean.numel()
        if raw_logits.ndim != 2 or raw_logits.shape[1] != k or len(raw_logits) < 2:
            raise ValueError(f"expected N×{k} logits with N ≥ 2, got {tuple(raw_logits.shape)}")
        raw = raw_logits.double()
        mean, std = raw.mean(0), raw.std(0, unbiased=False).clamp_min(min_std)
        bias = _balancing_bias((raw - mean) / std) if balance else torch.zeros_like(mean)
        self.mean.copy_(mean.to(self.mean.dtype))
        self.std.copy_(std.to(self.std.dtype))
        self.bias.copy_(bias.to(self.bias.dtype))


def _balancing_bias(z: torch.Tensor, iterations: int = 500) -> torch.Tensor:
    """Per-class offsets b (mean 0) with arg-max(z + b) close to uniform over the rows of z.

    A deterministic fixed-step-decay iteration on the class shares: a class predicted more
    often than 1/K is lowered, one predicted less often raised (z is standardised, so steps
    are in units of one logit standard deviation).
    """
    n, k = z.shape
    bias = torch.zeros(k, dtype=z.dtype)
    for step in range(iterations):
        shares = torch.bincount((z + bias).argmax(1), minlength=k).to(z.dtype) / n
        bias -= 0.5 / (1.0 + step / 50.0) * k * (shares - 1.0 / k)
    return bias - bias.mean()


class StandardisedLogits(nn.Module):
    """Wraps any classifier with a :class:`LogitStandardisation` of its logits.

    The wrapped classifier is ``.network`` (its parameter names keep their meaning, prefixed
    ``network.``); the affine is ``.logit_standardisation``. Identity until calibrated with
    :func:`calibrate_logits`.
    """

    def __init__(self, network: nn.Module, num_classes: int) -> None:
        super().__init__()
        self.network = network
        self.num_classes = num_classes
        self.logit_standardisation = LogitStandardisation(num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logit_standardisation(self.network(x))


@torch.no_grad()
def calibrate_logits(
    model: nn.Module,
    images: torch.Tensor,
    balance: bool = False,
    batch_size: int = 500,
) -> nn.Module:
    """Fits ``model.logit_standardisation`` to the model's raw logits on ``images``.

    Label-free: only the unlabelled ``images`` (N ≥ 2) are used; see
    :class:`LogitStandardisation` for ``balance``. The raw logits are computed in eval mode
    with the affine reset to the identity; the model's train/eval mode is restored. Returns
    ``model`` (modified in place).
    """
    affine = getattr(model, "logit_standardisation", None)
    if not isinstance(affine, LogitStandardisation):
        raise ValueError(f"{type(model).__name__} has no logit_standardisation to calibrate")
    affine.reset()
    was_training = model.training
    model.eval()
    try:
        device = affine.mean.device
        raw = batched_logits(model, images, batch_size=batch_size, device=device)
    finally:
        model.train(was_training)
    affine.set_statistics(raw, balance=balance)
    return model
