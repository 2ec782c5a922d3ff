"""The example's SCM counterfactual generator, as a cfcheck adapter
(``pytest --method=digits_scm_example.generator``).

A Deep-SCM-style generator in two parts: the attribute mechanisms (:data:`~digits_scm_example.domain.MECHANISMS`,
the same equations the domain declares) propagate an intervention to its descendants, and a
conditional VAE is the image mechanism: abduction encodes the image under its observed attributes
(the posterior mean, the exogenous latent), and the counterfactual is that latent decoded under the
propagated attributes. Its weights are ``models/cvae.safetensors``, whose sha256 the model store
checks on load.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.kinds.scm.methods.contract import SCMGenerator
from cfcheck.models.store import ModelStore

from .domain import NAME, ROOT, propagate
from .networks import condition

cfcheck_name = "digits_cvae"


class ConditionalVAEGenerator(SCMGenerator):
    """Abduct by encoding, act on the attributes, predict by decoding (deterministic)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model.eval()

    @torch.no_grad()
    def counterfactuals(
        self,
        x: torch.Tensor,
        parents: dict[str, torch.Tensor],
        intervention: dict[str, torch.Tensor],
        generator: torch.Generator,
    ) -> torch.Tensor:
        observed = {name: value.cpu() for name, value in parents.items()}
        new = propagate(observed, {name: value.cpu() for name, value in intervention.items()})
        latent = self.model.encode(x.cpu().float(), condition(observed))[0]
        return self.model.decode(latent, condition(new)).to(device=x.device, dtype=x.dtype)


def load_generator() -> ConditionalVAEGenerator:
    """The generator with the committed weights (their sha256 checked by the model store)."""
    return ConditionalVAEGenerator(ModelStore(ROOT / "models", NAME).load("cvae"))


@pytest.fixture(scope="session")
def cf_method() -> ConditionalVAEGenerator:
    return load_generator()
