"""The order of the training examples, epoch after epoch: every training loop shuffles here.

Two schemes, each fixed by the weights trained with it (a retraining must draw the same orders):

- **per-epoch seeds** (:func:`epoch_order` with a :class:`~cfcheck.core.seeds.Stream`): epoch
  ``e``'s order is ``randperm(n)`` under its own seed, ``seeded(seed, stream, e)``, so a run
  resumed mid-way needs no saved order;
- **one generator** (:func:`epoch_orders` with ``generator``): each epoch's order is the next
  ``randperm(n)`` drawn from a generator the caller seeded.

:func:`epoch_batches` cuts the per-epoch orders into full batches.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from cfcheck.core.seeds import EPOCH_ORDER, Stream, seeded

__all__ = ["epoch_batches", "epoch_order", "epoch_orders", "steps_per_epoch"]


def steps_per_epoch(n: int, batch_size: int) -> int:
    """Training steps in one pass over ``n`` examples in full batches (at least one)."""
    return max(1, n // batch_size)


def epoch_order(n: int, seed: int, epoch: int, stream: Stream = EPOCH_ORDER) -> torch.Tensor:
    """The order of epoch ``epoch``'s ``n`` examples: ``randperm(n)`` under ``seeded(seed, stream, epoch)``."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(seeded(seed, stream, epoch)))


def epoch_orders(
    n: int,
    epochs: int,
    *,
    seed: int | None = None,
    stream: Stream = EPOCH_ORDER,
    generator: torch.Generator | None = None,
) -> Iterator[tuple[int, torch.Tensor]]:
    """(epoch, order) of ``epochs`` epochs over ``n`` examples, each order drawn when its epoch
    starts: under the epoch's own seed (``seed``, ``stream``: :func:`epoch_order`) or, given
    ``generator``, the next ``randperm(n)`` drawn from it."""
    if (seed is None) == (generator is None):
        raise ValueError("give either `seed` (per-epoch seeds) or `generator` (one generator), not both or neither")
    for epoch in range(epochs):
        if generator is not None:
            yield epoch, torch.randperm(n, generator=generator)
        else:
            yield epoch, epoch_order(n, seed, epoch, stream)  # type: ignore[arg-type]


def epoch_batches(n: int, batch_size: int, seed: int, epochs: int) -> Iterator[torch.Tensor]:
    """Row indices of each training step: ``epochs`` passes over ``n`` examples in full batches
    (:func:`steps_per_epoch`), each pass in the order :func:`epoch_order` gives it under
    :data:`~cfcheck.core.seeds.EPOCH_ORDER`."""
    per_epoch = steps_per_epoch(n, batch_size)
    for _, order in epoch_orders(n, epochs, seed=seed):
        for position in range(per_epoch):
            yield order[position * batch_size : (position + 1) * batch_size]
