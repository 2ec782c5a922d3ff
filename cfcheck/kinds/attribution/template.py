"""The adapter ``cfcheck new-adapter attribution`` writes: a feature attribution in ten lines."""

ADAPTER = """\
# {name}.py: a feature attribution for cfcheck (pytest --method={name}.py)
import pytest


class MyAttribution:
    def attribute(self, x, model, target, *, generator=None):
        # x: float inputs; model: a frozen nn.Module giving logits; target: int64 N, the explained class
        x = x.clone().requires_grad_(True)
        model(x).gather(1, target[:, None]).sum().backward()
        return x.grad.detach()  # shaped like x, any real values (here: the gradient)


@pytest.fixture
def cf_method() -> MyAttribution:  # the annotation tells cfcheck the kind before the run starts
    return MyAttribution()
"""
