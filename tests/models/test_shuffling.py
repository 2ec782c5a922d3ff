"""cfcheck.models.shuffling draws exactly the epoch orders the training loops drew by hand (the
shipped weights were trained on them): each old loop is written out here beside the helper."""

from __future__ import annotations

import pytest
import torch

from cfcheck.core.seeds import EPOCH_ORDER, FLOW_EPOCH_ORDER, SMALL_NET_EPOCH_ORDER
from cfcheck.models.shuffling import epoch_batches, epoch_order, epoch_orders, steps_per_epoch


def _old_per_epoch(n, seed, epochs, stride):
    return [
        torch.randperm(n, generator=torch.Generator().manual_seed(seed * stride + epoch)) for epoch in range(epochs)
    ]


@pytest.mark.parametrize(
    ("stream", "stride"), [(EPOCH_ORDER, 100_003), (SMALL_NET_EPOCH_ORDER, 1009), (FLOW_EPOCH_ORDER, 7919)]
)
@pytest.mark.parametrize("seed", [0, 3, 41])
def test_per_epoch_orders_are_the_old_loops(stream, stride, seed):
    old = _old_per_epoch(57, seed, 4, stride)
    new = list(epoch_orders(57, 4, seed=seed, stream=stream))
    assert [epoch for epoch, _ in new] == [0, 1, 2, 3]
    assert all(torch.equal(a, b) for a, (_, b) in zip(old, new))
    assert all(torch.equal(old[e], epoch_order(57, seed, e, stream)) for e in range(4))  # resumable: one epoch


def test_one_generator_orders_are_the_old_loop():
    old_rng, new_rng = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    old = [torch.randperm(30, generator=old_rng) for _ in range(5)]
    new = [order for _, order in epoch_orders(30, 5, generator=new_rng)]
    assert all(torch.equal(a, b) for a, b in zip(old, new))
    assert torch.equal(old_rng.get_state(), new_rng.get_state())  # nothing more drawn


def test_epoch_batches_are_the_old_definition():
    n, batch_size, seed, epochs = 50, 8, 2, 3
    old = [
        order[p * batch_size : (p + 1) * batch_size]
        for order in _old_per_epoch(n, seed, epochs, 100_003)
        for p in range(max(1, n // batch_size))
    ]
    new = list(epoch_batches(n, batch_size, seed, epochs))
    assert len(new) == epochs * steps_per_epoch(n, batch_size) == len(old)
    assert all(torch.equal(a, b) for a, b in zip(old, new))


def test_a_scheme_must_be_chosen():
    with pytest.raises(ValueError, match="either `seed`"):
        list(epoch_orders(4, 1))
    with pytest.raises(ValueError, match="either `seed`"):
        list(epoch_orders(4, 1, seed=0, generator=torch.Generator()))
