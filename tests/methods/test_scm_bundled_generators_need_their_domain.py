"""The bundled SCM generators condition on the parents of the domain they were trained on; on a user's
attribute domain (no ``attribute_mechanisms(models)`` hook) their adapters say so and what to do,
rather than failing with an AttributeError deep in a fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfcheck.kinds.scm.methods.vae import domain_attribute_mechanisms

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scm"


class _UserDomain:
    name = "my_faces"


class _BundledLike:
    name = "bundled_like"

    def attribute_mechanisms(self, models):
        return ("built from", tuple(sorted(models)))


def test_a_domain_without_the_hook_is_refused_naming_generator_domain_and_the_way_out():
    with pytest.raises(TypeError) as caught:
        domain_attribute_mechanisms(_UserDomain(), {}, "scm_vae")
    message = str(caught.value)
    assert "'scm_vae'" in message and "'my_faces'" in message
    assert "attribute_mechanisms(models)" in message
    assert "SCM generators on your own data" in message


def test_a_domain_with_the_hook_builds_the_mechanisms_from_the_models():
    found = domain_attribute_mechanisms(_BundledLike(), {"b": 1, "a": 2}, "scm_vae")
    assert found == ("built from", ("a", "b"))


@pytest.mark.parametrize("adapter", sorted(p.name for p in FIXTURES.glob("*.py") if "SCMVAE" in p.read_text()))
def test_every_bundled_image_mechanism_adapter_goes_through_the_check(adapter):
    source = (FIXTURES / adapter).read_text()
    assert "domain_attribute_mechanisms(cfcheck_domain, cfcheck_models, cfcheck_name)" in source
    assert ".attribute_mechanisms(" not in source.replace("domain_attribute_mechanisms(", "")
