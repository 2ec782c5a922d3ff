"""The adapter ``cfcheck new-adapter vce`` writes: a visual counterfactual explainer in ten lines."""

ADAPTER = """\
# {name}.py: a visual counterfactual explainer for cfcheck (pytest --method={name}.py)
import pytest


class MyExplainer:
    def explain(self, x, target, classifier, *, generator=None):
        # x: float N×C×H×W in [0, 1]; target: int64 N; classifier: a frozen nn.Module giving logits;
        # generator: a seeded torch.Generator (draw all randomness from it)
        return x.clone()  # your counterfactuals, shaped like x, in [0, 1] (this placeholder fails validity)


@pytest.fixture
def cf_method() -> MyExplainer:  # the annotation tells cfcheck the kind before the run starts
    return MyExplainer()
"""
