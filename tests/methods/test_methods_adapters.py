"""The bundled VCE adapters in ``cfcheck.fixtures.vce`` load as pytest plugins, as a user's would."""

from __future__ import annotations

import pytest

ADAPTERS = {
    "identity": "IdentityControl",
    "noise": "UniformNoiseControl",
    "pgd": "TargetedPGD",
    "nearest": "NearestTargetNeighbour",
    "wachter": "WachterCounterfactual",
    "random_target": "RandomTargetImage",
}

# A stand-in for cfcheck's own ``cfcheck_domain`` fixture: a tiny bank, no rendering.
FAKE_DOMAIN_CONFTEST = """
import pytest
import torch
from types import SimpleNamespace


class FakeDomain:
    split_roles = {"train": "train"}

    def __init__(self):
        self.requested = []

    def split(self, name, n=None):
        self.requested.append((name, n))
        images = torch.rand(12, 1, 32, 32, generator=torch.Generator().manual_seed(0))
        return SimpleNamespace(images=images, labels=torch.arange(12) % 10)


@pytest.fixture(scope="session")
def cfcheck_domain():
    return FakeDomain()
"""


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_adapter_provides_cf_method(pytester: pytest.Pytester, name: str) -> None:
    pytester.makeconftest(FAKE_DOMAIN_CONFTEST)
    pytester.makepyfile(
        f"""
        def test_cf_method(cf_method, request):
            assert type(cf_method).__name__ == {ADAPTERS[name]!r}
            if {name!r} == "nearest":
                domain = request.getfixturevalue("cfcheck_domain")
                assert domain.requested == [("train", 10000)]
                assert cf_method.bank_images.shape == (12, 1, 32, 32)
        """
    )
    result = pytester.runpytest_inprocess("-p", f"cfcheck.fixtures.vce.{name}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
