"""The latent explainer kind, declared for the engine (torch-free).

Its call shares the name ``explain`` with visual counterfactual explainers: an ``explain`` that
names ``z`` or ``latent_classifier`` is this kind's. The domain's decoder is passed as
``generator`` (the papers' name for it), so cfcheck's seeded RNG is passed as ``rng=``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cfcheck.kinds.declaration import KindDeclaration

if TYPE_CHECKING:
    import torch

#: parameter names only a latent explainer's ``explain`` has
LATENT_PARAMETERS = frozenset({"z", "latent_classifier"})


@runtime_checkable
class LatentExplainer(Protocol):
    def explain(self, z: torch.Tensor, latent_classifier: torch.nn.Module, generator: torch.nn.Module) -> Any: ...


def names_latent_parameters(parameters: frozenset[str]) -> bool:
    """Whether an ``explain`` with these parameter names is a latent explainer's."""
    return bool(parameters & LATENT_PARAMETERS)


#: the metric cards the latent suites record (a protocol of the kind covers exactly these)
METRIC_CARDS = (
    *("coverage", "synbols_ef_rate", "synbols_ncf_rate", "synbols_cf_rate", "synbols_sce_rate"),
    *("synbols_trivial_rate", "synbols_s_sharp"),
)

DECLARATION = KindDeclaration(
    name="latent",
    description="latent explainer: explain(z, latent_classifier, generator) -> z_cf",
    call="explain",
    arguments=("z", "latent_classifier", "generator"),
    spec="cfcheck.kinds.latent.spec:SPEC",
    section="cfcheck.kinds.latent.section:SECTION_DEFAULTS",
    template="cfcheck.kinds.latent.template:ADAPTER",
    suites="cfcheck.suites.latent",
    adapters="cfcheck.fixtures.latent",
    order=30,
    rng_keyword="rng",
    claims=names_latent_parameters,
    protocol=LatentExplainer,
    cards=METRIC_CARDS,
    own_cards="cfcheck.kinds.latent.cards:CARDS",
)
