"""cfcheck.models.inference: the one batched, gradient-free inference loop."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.models.inference import batched_apply, batched_logits, model_device


class Doubler(nn.Module):
    """Parameter-free; records the size of every chunk it sees."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.sizes.append(x.shape[0])
        return (2 * x).double()


def test_chunks_concatenate_to_float32_cpu_without_grad():
    model = Doubler()
    x = torch.rand(10, 3)
    out = batched_logits(model, x, batch_size=4)
    assert model.sizes == [4, 4, 2]
    assert out.dtype == torch.float32 and out.device.type == "cpu" and not out.requires_grad
    torch.testing.assert_close(out, 2 * x)


def test_matches_one_full_batch_of_a_real_model():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)).eval()
    x = torch.rand(33, 5)
    with torch.no_grad():
        torch.testing.assert_close(batched_logits(net, x, batch_size=8), net(x))
    assert model_device(net) == torch.device("cpu") and model_device(Doubler()) is None


def test_dict_outputs_are_concatenated_per_key():
    out = batched_apply(lambda x: {"a": x, "b": x.sum(1)}, torch.ones(5, 2), batch_size=2)
    assert set(out) == {"a", "b"} and out["a"].shape == (5, 2) and out["b"].shape == (5,)


def test_empty_input_and_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="empty batch of shape \\(0, 3\\)"):
        batched_logits(Doubler(), torch.empty(0, 3))
    with pytest.raises(ValueError, match="positive int"):
        batched_logits(Doubler(), torch.rand(2, 3), batch_size=0)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        batched_logits(lambda x: x, torch.rand(2, 3))  # type: ignore[arg-type]
