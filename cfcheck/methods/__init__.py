"""The bundled reference methods and controls, one folder per kind they implement.

- ``vce/``: visual counterfactual explainers, ``explain(x, target, classifier, *, generator=None)``,
  on the one preamble :class:`cfcheck.methods.vce.contract.VisualExplainer`;
- ``scm/``: SCM counterfactual generators, ``counterfactual(x, parents, intervention)``;
- ``attribution/``: feature attributions, ``attribute(x, model, target)``;
- ``latent/``: latent explainers, ``explain(z, latent_classifier, generator, *, rng=None)``;
- ``common``: the input checks and RNG helpers the kinds share.

Each is declared for pytest by an adapter in ``cfcheck.fixtures.<kind>`` exactly as a user declares
their own method.
"""

from cfcheck.methods.vce.adversarial import TargetedPGD
from cfcheck.methods.vce.controls import IdentityControl, UniformNoiseControl
from cfcheck.methods.vce.nearest import NearestTargetNeighbour
from cfcheck.methods.vce.wachter import WachterCounterfactual

__all__ = [
    "IdentityControl",
    "NearestTargetNeighbour",
    "TargetedPGD",
    "UniformNoiseControl",
    "WachterCounterfactual",
]
