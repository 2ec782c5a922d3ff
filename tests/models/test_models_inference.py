"""cfcheck.models.inference: the one batched, gradient-free inference loop."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.models.inference import batched_apply, batched_logits, inference_copy, model_device


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


def _conv_net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3), nn.Flatten(), nn.Linear(144, 3))


def test_inference_copy_is_channels_last_and_leaves_the_model_as_it_was():
    net = _conv_net()
    fast = inference_copy(net)
    assert fast is not net and inference_copy(net) is fast  # made once
    assert fast[2].weight.is_contiguous(memory_format=torch.channels_last)
    assert net[2].weight.is_contiguous() and not net[2].weight.is_contiguous(memory_format=torch.channels_last)
    x = torch.rand(40, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(batched_logits(net, x, batch_size=16), net(x), rtol=1e-5, atol=1e-5)


def test_inference_copy_follows_changes_to_the_weights_and_the_mode():
    net = _conv_net()
    x = torch.rand(5, 1, 8, 8)
    before = batched_logits(net, x)
    with torch.no_grad():
        net[4].bias.add_(10.0)  # in place
    torch.testing.assert_close(batched_logits(net, x), before + 10.0, rtol=1e-5, atol=1e-4)
    net[4].bias = nn.Parameter(torch.zeros(3))  # replaced
    with torch.no_grad():
        torch.testing.assert_close(batched_logits(net, x), net(x), rtol=1e-5, atol=1e-5)
    assert inference_copy(net.train()).training and not inference_copy(net.eval()).training


def test_inference_copy_returns_models_it_cannot_speed_up_unchanged():
    linear = nn.Linear(4, 2)
    assert inference_copy(linear) is linear  # no 4-d weights

    class Uncopyable(nn.Conv2d):
        def __deepcopy__(self, memo):
            raise RuntimeError("no copies")

    conv = Uncopyable(1, 2, 3)
    assert inference_copy(conv) is conv
