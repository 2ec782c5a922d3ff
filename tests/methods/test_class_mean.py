"""The class-mean control returns its bank's mean image of each input's target class."""

import pytest
import torch
from torch import nn

from cfcheck.kinds.vce.methods.controls import ClassMeanImage


def test_every_output_is_the_mean_image_of_its_target_class():
    gen = torch.Generator().manual_seed(0)
    images = torch.rand(12, 1, 4, 4, generator=gen)
    labels = torch.tensor([0, 1, 2] * 4)
    method = ClassMeanImage(images, labels)
    x, target = torch.rand(5, 1, 4, 4, generator=gen), torch.tensor([2, 0, 2, 1, 0])
    out = method.explain(x, target, nn.Identity())
    for row, t in zip(out, target.tolist()):
        assert torch.allclose(row, images[labels == t].mean(0), atol=1e-6)
    assert out.dtype == x.dtype and out.shape == x.shape
    assert torch.equal(out[0], out[2])  # one prototype per class: no variety


def test_a_target_class_missing_from_the_bank_is_named():
    method = ClassMeanImage(torch.rand(4, 1, 2, 2), torch.tensor([0, 0, 1, 1]))
    with pytest.raises(ValueError, match=r"no image of target class\(es\) \[3\]"):
        method.explain(torch.rand(2, 1, 2, 2), torch.tensor([1, 3]), nn.Identity())
