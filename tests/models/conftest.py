"""Run the model tests single-threaded, as the reference models are trained.

Small CPU kernels with two OpenMP threads slow down by an order of magnitude when the machine
is oversubscribed (CI runners, parallel helpers); one thread keeps the folder fast there and
costs little on an idle machine. The previous setting is restored after each module.
"""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _single_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
