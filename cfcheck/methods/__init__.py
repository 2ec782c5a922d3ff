"""Reference visual counterfactual explainers and controls.

Each implements ``explain(x, target, classifier, *, generator=None)`` and is declared for
pytest by an adapter in ``cfcheck.fixtures`` exactly as a user declares their own method.
"""

from cfcheck.methods.adversarial import TargetedPGD
from cfcheck.methods.controls import IdentityControl, UniformNoiseControl
from cfcheck.methods.nearest import NearestTargetNeighbour
from cfcheck.methods.wachter import WachterCounterfactual

__all__ = [
    "IdentityControl",
    "NearestTargetNeighbour",
    "TargetedPGD",
    "UniformNoiseControl",
    "WachterCounterfactual",
]
