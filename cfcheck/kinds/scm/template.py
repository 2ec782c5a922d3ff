"""The adapter ``cfcheck new-adapter scm`` writes: an SCM counterfactual generator in ten lines."""

ADAPTER = """\
# {name}.py: an SCM counterfactual image generator for cfcheck (pytest --method={name}.py)
import pytest


class MySCM:
    def counterfactual(self, x, parents, intervention, *, generator=None):
        # x: float N×C×H×W in [0, 1]; parents: {{name: N values}}; intervention: {{name: N new values}}
        # (abduction, action, prediction)
        return x.clone()  # x*: shaped like x, in [0, 1] (this placeholder fails effectiveness)


@pytest.fixture
def cf_method() -> MySCM:  # the annotation tells cfcheck the kind before the run starts
    return MySCM()
"""
