"""The attribution profile section: validation and whose GOAR levels a domain gets."""

from __future__ import annotations

import dataclasses

import pytest

from cfcheck.domains import get_domain
from cfcheck.kinds.attribution.section import DEFAULT_GOAR_LEVELS, SECTION_DEFAULTS, AttributionSection


def test_a_profile_without_goar_levels_uses_each_domains_own():
    section = SECTION_DEFAULTS["quick"]
    assert section.goar_levels is None
    assert section.goar_levels_for(get_domain("gmm")) == tuple(round(0.1 * i, 1) for i in range(1, 11))
    assert section.goar_levels_for(get_domain("morpho")) == DEFAULT_GOAR_LEVELS == (0.25, 0.5, 0.75, 1.0)


def test_goar_levels_a_profile_sets_apply_to_every_domain():
    section = dataclasses.replace(SECTION_DEFAULTS["standard"], goar_levels=(0.5, 1.0))
    section.validate()
    for name in ("gmm", "morpho"):
        assert section.goar_levels_for(get_domain(name)) == (0.5, 1.0)


@pytest.mark.parametrize("levels", [(), (0.5, 0.5), (1.0, 0.5), (0.0, 1.0), (-0.1,)])
def test_goar_levels_must_be_positive_and_increasing(levels):
    with pytest.raises(ValueError, match="goar_levels must be positive and increasing"):
        AttributionSection(n_inputs=1, goar_levels=levels).validate()


def test_randomisation_draws_must_be_at_least_one():
    assert AttributionSection(n_inputs=1, randomisation_draws=1).randomisation_draws == 1
    AttributionSection(n_inputs=1, randomisation_draws=1).validate()
    with pytest.raises(ValueError, match="randomisation_draws must be >= 1"):
        AttributionSection(n_inputs=1, randomisation_draws=0).validate()
