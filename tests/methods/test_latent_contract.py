"""The latent kind's one preamble (:mod:`cfcheck.kinds.latent.methods.contract`): what every bundled latent
explainer's ``explain(z, latent_classifier, generator, *, rng=None)`` checks before its search runs."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.latent.methods.controls import LatentIdentity, LatentNoise, LatentRepeater
from cfcheck.kinds.latent.methods.gradient_explainers import XGEM, DiCE, DiVE
from cfcheck.kinds.latent.methods.growing_spheres import GrowingSpheres
from cfcheck.kinds.latent.methods.informed_search import InformedSearch
from cfcheck.kinds.latent.methods.latent_cf import LatentCF
from cfcheck.kinds.latent.methods.stylex_attfind import StylExAttFind

BUNDLED = [LatentIdentity, LatentNoise, LatentRepeater, GrowingSpheres, InformedSearch, LatentCF, DiCE, XGEM, DiVE]
BUNDLED += [StylExAttFind]


class _Raises(nn.Module):
    """A classifier (or decoder) that fails the test if it is called."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        raise AssertionError("the model was called")


class _Normal(LatentSpaceExplainer):
    """K standard normal draws per input from the generator it is handed (what it received is kept)."""

    k = 2

    def counterfactuals(self, z, latent_classifier, generator, rng):
        self.received = rng
        return torch.randn((z.shape[0], self.k, z.shape[1]), generator=rng)


def _inputs(n: int = 3):
    return torch.linspace(-1, 1, n * 4).reshape(n, 4), nn.Linear(4, 2), nn.Identity()


# -- the bundled explainers are on the preamble, with the signatures they were published with ---------
@pytest.mark.parametrize("cls", BUNDLED, ids=lambda cls: cls.__name__)
def test_every_bundled_explainer_is_a_latent_space_explainer_with_its_published_signature(cls):
    assert issubclass(cls, LatentSpaceExplainer)
    signature = inspect.signature(cls.explain)
    assert list(signature.parameters)[:4] == ["self", "z", "latent_classifier", "generator"]
    assert signature.parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.parameters["rng"].default is None
    # only the oracle names the oracle's keyword (the kind passes the variant's domain to it alone)
    assert ("oracle_domain" in signature.parameters) == (cls is InformedSearch)


# -- validation: each error names the argument, what was expected and what came --------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"z": [[0.0]]}, "z must be a float N×D tensor, got list"),
        ({"z": torch.zeros(3)}, r"z must be a float N×D tensor, got Tensor \(3,\)"),
        ({"z": torch.zeros(3, 4, dtype=torch.int64)}, r"z must be a float N×D tensor, got Tensor \(3, 4\)"),
        ({"latent_classifier": 3}, "latent_classifier must be callable, got int"),
    ],
)
@pytest.mark.parametrize("method", [_Normal(), LatentIdentity(), LatentNoise(), DiCE()], ids=lambda m: type(m).__name__)
def test_bad_inputs_are_refused_with_what_was_expected_and_what_came(method, change, message):
    z, classifier, decoder = _inputs()
    arguments = {"z": z, "latent_classifier": classifier} | change
    with pytest.raises(TypeError, match=message):
        method.explain(arguments["z"], arguments["latent_classifier"], decoder)


def test_an_rng_that_is_not_a_generator_is_refused_by_its_own_name():
    z, classifier, decoder = _inputs()
    with pytest.raises(TypeError, match="Expected `rng` to be a torch.Generator or None, but got int"):
        LatentNoise().explain(z, classifier, decoder, rng=3)


def test_the_oracle_still_asks_for_its_domain():
    z, classifier, decoder = _inputs()
    with pytest.raises(TypeError, match="oracle_domain"):
        InformedSearch().explain(z, classifier, decoder)


# -- an empty batch: an empty N×K×D answer, and no model is called ----------------------------------
@pytest.mark.parametrize("cls", [*BUNDLED, _Normal], ids=lambda cls: cls.__name__)
def test_an_empty_batch_returns_an_empty_one_without_calling_a_model(cls):
    method = cls() if cls is not DiVE else DiVE(masked=0)
    oracle = {"oracle_domain": object()} if cls is InformedSearch else {}
    out = method.explain(torch.zeros(0, 4), _Raises(), _Raises(), **oracle)
    assert out.shape == (0, method.k, 4) and out.dtype == torch.float32
    assert not hasattr(method, "received")  # the method's own code never ran


# -- the rng: the caller's, or a fresh one seeded 0 -------------------------------------------------
def test_no_rng_means_a_fresh_generator_seeded_zero():
    z, classifier, decoder = _inputs()
    expected = torch.randn((3, 2, 4), generator=torch.Generator().manual_seed(0))
    assert torch.equal(_Normal().explain(z, classifier, decoder), expected)
    assert torch.equal(_Normal().explain(z, classifier, decoder), expected)  # not the global RNG's draw
    noise = LatentNoise(k=2, spread=0.5).explain(z, classifier, decoder)
    assert torch.equal(noise, z[:, None, :] + 0.5 * expected)


def test_the_callers_rng_is_the_one_drawn_from():
    z, classifier, decoder = _inputs()
    rng = torch.Generator().manual_seed(5)
    method = _Normal()
    out = method.explain(z, classifier, decoder, rng=rng)
    assert method.received is rng
    assert torch.equal(out, torch.randn((3, 2, 4), generator=torch.Generator().manual_seed(5)))


# -- the hook is required ---------------------------------------------------------------------------
def test_an_explainer_without_counterfactuals_cannot_be_built():
    class Incomplete(LatentSpaceExplainer):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()
