"""The bundled reference methods and controls, one folder per kind they implement.

- ``vce/``: visual counterfactual explainers, ``explain(x, target, classifier, *, generator=None)``,
  on the one preamble :class:`cfcheck.methods.vce.contract.VisualExplainer`;
- ``scm/``: SCM counterfactual generators, ``counterfactual(x, parents, intervention)``;
- ``attribution/``: feature attributions, ``attribute(x, model, target)``;
- ``latent/``: latent explainers, ``explain(z, latent_classifier, generator, *, rng=None)``;
- ``common``: the input checks and RNG helpers the kinds share.

Each is declared for pytest by an adapter in ``cfcheck.fixtures`` exactly as a user declares
their own method. The module names from before the per-kind folders (``cfcheck.methods.wachter``,
``cfcheck.methods.attributions`` …, :data:`MOVED`) still import, as the same module objects.
"""

from cfcheck.core.aliases import install_aliases

#: old module name -> its module now (both relative to ``cfcheck.methods``)
MOVED = {
    "adversarial": "vce.adversarial",
    "contract": "vce.contract",
    "controls": "vce.controls",
    "dvce": "vce.dvce",
    "fastdime": "vce.fastdime",
    "nearest": "vce.nearest",
    "truth": "vce.truth",
    "wachter": "vce.wachter",
    "scm_controls": "scm.controls",
    "scm_vae": "scm.vae",
    "attributions": "attribution.saliency",
    "captum_adapter": "attribution.captum_adapter",
    "growing_spheres": "latent.growing_spheres",
    "informed_search": "latent.informed_search",
    "latent_cf": "latent.latent_cf",
    "latent_controls": "latent.controls",
    "latent_gradient_explainers": "latent.gradient_explainers",
    "latent_search": "latent.search",
    "stylex_attfind": "latent.stylex_attfind",
}
install_aliases(__name__, MOVED)

from cfcheck.methods.vce.adversarial import TargetedPGD  # noqa: E402 - after the aliases, which they may use
from cfcheck.methods.vce.controls import IdentityControl, UniformNoiseControl  # noqa: E402
from cfcheck.methods.vce.nearest import NearestTargetNeighbour  # noqa: E402
from cfcheck.methods.vce.wachter import WachterCounterfactual  # noqa: E402

__all__ = [
    "MOVED",
    "IdentityControl",
    "NearestTargetNeighbour",
    "TargetedPGD",
    "UniformNoiseControl",
    "WachterCounterfactual",
]
