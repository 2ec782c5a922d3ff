"""The glyph domain's generative process against its stated laws: fonts, label parity and
noise, the spurious font correlation of each scenario, the nuisance distributions (KS), the
rendered images, determinism and the Domain protocol."""

from __future__ import annotations

import math

import pytest
import torch
from scipy import stats

from cfcheck.domains import available_domains, get_domain
from cfcheck.domains.base import SPLIT_ROLES, Domain, MissingCapability
from cfcheck.domains.glyphs import (
    CHARACTERS,
    FONTS,
    LABEL_NOISE,
    SCENARIOS,
    SPLIT_SIZES,
    GlyphImages,
    GlyphsDomain,
    get_scenario,
    render,
    sample_factors,
    spurious_correlation,
)
from cfcheck.domains.glyphs.splits import split_factors
from cfcheck.kinds import kind_spec
from cfcheck.kinds.protocols import MethodKind

#: matplotlib's fonts with all 48 characters under their own glyph names (cmsy10 and cmex10,
#: the TeX symbol fonts, map letters to symbols and are excluded).
EXPECTED_FONTS = (
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-BoldOblique.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSans.ttf",
    "DejaVuSansMono-Bold.ttf",
    "DejaVuSansMono-BoldOblique.ttf",
    "DejaVuSansMono-Oblique.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSerif-BoldItalic.ttf",
    "DejaVuSerif-Italic.ttf",
    "DejaVuSerif.ttf",
    "STIXGeneral.ttf",
    "STIXGeneralBol.ttf",
    "STIXGeneralBolIta.ttf",
    "STIXGeneralItalic.ttf",
    "cmb10.ttf",
    "cmmi10.ttf",
    "cmr10.ttf",
    "cmss10.ttf",
    "cmti10.ttf",
    "cmtt10.ttf",
)
TRAIN = SPLIT_SIZES["train"]


def _binomial_tolerance(p: float, n: int, sigmas: float = 4.0) -> float:
    return sigmas * math.sqrt(p * (1.0 - p) / n)


def test_characters_and_fonts():
    assert len(CHARACTERS) == len(set(CHARACTERS)) == 48
    # digits and both cases, less the shapes one could confuse: 0/O, 1/I/l, and the lowercase
    # letters that are their capital made small (c o p s u v w x z)
    alphabet = set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    assert set(CHARACTERS) == alphabet - set("01IOlcopsuvwxz")
    assert FONTS == EXPECTED_FONTS


# -- labels and spurious fonts, measured on each scenario's 30k train images --------------------


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_label_is_the_character_parity_with_five_percent_noise(scenario):
    factors = split_factors(scenario, "train")
    assert len(factors) == TRAIN
    noise = float((factors.label != factors.character % 2).double().mean())
    assert abs(noise - LABEL_NOISE) <= _binomial_tolerance(LABEL_NOISE, TRAIN), noise
    assert set(factors.label.unique().tolist()) == {0, 1}
    counts = torch.bincount(factors.character, minlength=48)
    assert stats.chisquare(counts.numpy()).pvalue > 1e-3  # characters uniform


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_spurious_fonts_follow_the_label_at_the_stated_correlation(scenario):
    spec = get_scenario(scenario)
    zero, one = spec.spurious_fonts
    assert len(zero) == len(one) == spec.n_spurious // 2 and not set(zero) & set(one)
    factors = split_factors(scenario, "train")
    measured, count = spurious_correlation(factors, spec)
    assert abs(measured - spec.correlation) <= _binomial_tolerance(spec.correlation, count), (measured, count)
    # the font marginal stays uniform over the 22 fonts
    assert stats.chisquare(torch.bincount(factors.font, minlength=len(FONTS)).numpy()).pvalue > 1e-3
    # the other fonts are independent of the label
    spurious = torch.tensor([*zero, *one])
    other = ~torch.isin(factors.font, spurious)
    table = torch.stack(
        [torch.bincount(factors.font[other & (factors.label == y)], minlength=len(FONTS)) for y in (0, 1)]
    )
    table = table[:, table.sum(0) > 0]
    assert stats.chi2_contingency(table.numpy()).pvalue > 1e-3


def test_the_spurious_groups_differ_in_stroke_weight():
    """Label 0's spurious fonts are bold and label 1's light: every glyph of a label-0 font carries
    more ink on average than any label-1 font's (the bank's coverage, 48 characters per font)."""
    from cfcheck.domains.glyphs.fonts import glyph_bank

    ink = glyph_bank().float().reshape(len(FONTS), len(CHARACTERS), -1).mean(dim=(1, 2))
    heavy, light = get_scenario("fonts10-corr95").spurious_fonts
    assert float(ink[list(heavy)].min()) > 1.3 * float(ink[list(light)].max()), ink.tolist()
    # the neutral fonts span the range between, so weight alone does not decide the label
    neutral = [f for f in range(len(FONTS)) if f not in {*heavy, *light}]
    assert float(ink[neutral].max()) > float(ink[list(light)].max())


def test_spurious_fonts_are_nested_and_the_correlation_check_can_fail():
    six, ten = get_scenario("fonts6-corr95").spurious_fonts, get_scenario("fonts10-corr95").spurious_fonts
    assert set(six[0]) <= set(ten[0]) and set(six[1]) <= set(ten[1])
    assert get_scenario("fonts6-corr50").spurious_fonts == six
    # the corr50 data measured against the corr95 statement is far outside the tolerance
    measured, count = spurious_correlation(split_factors("fonts6-corr50", "train"), get_scenario("fonts6-corr95"))
    assert abs(measured - 0.95) > 10 * _binomial_tolerance(0.95, count)


# -- nuisances: Kolmogorov–Smirnov against the stated laws --------------------------------------


NUISANCE_LAWS = {
    "rotation": (lambda f: f.rotation, stats.norm(0.0, 0.3)),
    "log_scale": (lambda f: torch.log(f.scale / 0.6) / 0.2, stats.norm(0.0, 1.0)),
    "shift_x": (lambda f: f.shift_x, stats.uniform(-5.0, 10.0)),
    "shift_y": (lambda f: f.shift_y, stats.uniform(-5.0, 10.0)),
}


@pytest.mark.parametrize("nuisance", list(NUISANCE_LAWS))
def test_nuisances_follow_their_laws(nuisance):
    read, law = NUISANCE_LAWS[nuisance]
    values = read(split_factors("fonts10-corr50", "train")).double().numpy()
    assert stats.kstest(values, law.cdf).pvalue > 1e-3
    # the test has power: a 10% wider law is rejected
    wider = stats.norm(0.0, 1.1 * law.std()) if nuisance in ("rotation", "log_scale") else stats.uniform(-5.5, 11.0)
    assert stats.kstest(values, wider.cdf).pvalue < 1e-6


def test_inverse_colour_is_a_fair_coin_independent_of_the_label():
    factors = split_factors("fonts6-corr95", "train")
    assert set(factors.inverse.unique().tolist()) == {0.0, 1.0}
    rate = float(factors.inverse.mean())
    assert abs(rate - 0.5) <= _binomial_tolerance(0.5, TRAIN)
    table = torch.stack([torch.bincount(factors.inverse[factors.label == y].long(), minlength=2) for y in (0, 1)])
    assert stats.chi2_contingency(table.numpy()).pvalue > 1e-3


# -- images ---------------------------------------------------------------------------------------


def test_rendered_images_show_their_nuisances():
    factors = sample_factors(400, 7, get_scenario("fonts6-corr50"))
    images = render(factors)
    assert images.shape == (400, 1, 32, 32) and images.dtype == torch.float32
    assert float(images.min()) >= 0.0 and float(images.max()) <= 1.0
    border = torch.cat([images[:, 0, 0, :], images[:, 0, -1, :], images[:, 0, :, 0], images[:, 0, :, -1]], 1)
    inverse = factors.inverse.bool()
    ink = torch.where(inverse[:, None, None, None], 1.0 - images, images)[:, 0]
    # background: dark for plain images, light for inverse ones (glyphs may touch the border)
    assert float(border[~inverse].median()) == 0.0 and float(border[inverse].median()) == 1.0
    assert bool((ink.sum((1, 2)) > 10).all()), "every image shows its glyph"
    # the ink's centre of mass follows the translation (a glyph's bounding-box centre is not its
    # ink centre: a loose tolerance, on the median error)
    grid = torch.arange(32, dtype=torch.float32) + 0.5
    mass = ink.sum((1, 2))
    centre_x = (ink.sum(1) * grid).sum(1) / mass
    centre_y = (ink.sum(2) * grid).sum(1) / mass
    unclipped = factors.scale < 0.75
    error_x = (centre_x - 16.0 - factors.shift_x)[unclipped].abs().median()
    error_y = (centre_y - 16.0 - factors.shift_y)[unclipped].abs().median()
    assert float(error_x) < 1.5 and float(error_y) < 1.5, (float(error_x), float(error_y))
    # ink grows with the scale (area ∝ scale²)
    assert stats.spearmanr(factors.scale.numpy(), mass.numpy()).statistic > 0.5


def test_rendering_is_deterministic_and_chunk_invariant():
    factors = sample_factors(300, 3, get_scenario("fonts10-corr95"))
    whole = render(factors)
    assert torch.equal(whole, render(factors, chunk_size=7))
    assert torch.equal(whole[:100], render(factors[:100]))
    with pytest.raises(ValueError, match="chunk_size"):
        render(factors, chunk_size=0)
    with pytest.raises(TypeError, match="GlyphFactors"):
        render(torch.zeros(3))


def test_splits_are_deterministic_prefix_stable_and_distinct():
    domain = GlyphsDomain("fonts6-corr95")
    test = domain.split("test", 500)
    assert isinstance(test, GlyphImages) and len(test) == 500
    assert test.labels.dtype == torch.int64 and test.latents.shape == (500, 11)
    again = GlyphsDomain("fonts6-corr95").split("test", 200)
    assert torch.equal(again.images, test.images[:200]) and torch.equal(again.labels, test.labels[:200])
    assert torch.equal(test.causal_labels, test.factors.character % 2)
    val = domain.split("val", 500)
    assert not torch.equal(val.images, test.images)
    other = GlyphsDomain("fonts10-corr95").split("test", 500)
    assert not torch.equal(other.factors.character, test.factors.character)


def test_split_and_scenario_arguments_are_validated():
    domain = GlyphsDomain()
    with pytest.raises(ValueError, match="unknown split 'oracle'"):
        domain.split("oracle")
    with pytest.raises(ValueError, match=r"n must be an int in \[0, 5000\]"):
        domain.split("test", 5001)
    with pytest.raises(ValueError, match="unknown glyph scenario 'fonts7-corr50'"):
        GlyphsDomain("fonts7-corr50")
    with pytest.raises(ValueError, match="non-negative int"):
        sample_factors(-1, 0, get_scenario("fonts6-corr50"))


# -- the Domain protocol and the registry ---------------------------------------------------------


def test_the_domain_protocol_and_its_declared_absences():
    domain = get_domain("glyphs")
    assert "glyphs" in available_domains()
    assert isinstance(domain, Domain) and isinstance(domain, GlyphsDomain)
    assert domain.scenario.name == "fonts6-corr95" and repr(domain) == "GlyphsDomain('fonts6-corr95')"
    assert (domain.name, domain.input_shape, domain.num_classes) == ("glyphs", (1, 32, 32), 2)
    assert domain.factor_names == () and domain.categorical_factors == ()
    assert set(domain.split_roles) == set(SPLIT_ROLES) and set(domain.split_roles.values()) <= set(SPLIT_SIZES)
    assert dict(domain.model_roles) == {
        "latent_explained": ("classifier_fonts6_corr95",),
        "latent_generator": ("generator",),
        "latent_encoder": ("encoder",),
    }
    assert "explained" not in domain.model_roles  # the VCE and attribution kinds keep skipping it
    assert domain.capabilities == frozenset({"latent_space"}) and domain.variants == tuple(SCENARIOS)
    assert domain.variant("fonts10-corr50").scenario.name == "fonts10-corr50"
    assert domain.variant("fonts10-corr50") is domain.variant("fonts10-corr50")
    z = torch.full((2, 11), 100.0)
    assert torch.equal(domain.clip_latents(z), domain.standardiser.high.expand(2, 11))
    assert domain.parents("test", torch.arange(3)) == {}
    with pytest.raises(ValueError, match="unknown split"):
        domain.parents("oracle", torch.arange(3))
    with pytest.raises(MissingCapability, match="glyphs"):
        domain.intervention_counterfactual("test", torch.arange(3), {})
    with pytest.raises(ValueError, match="no factors"):
        domain.sample_intervention("font", {}, torch.Generator())
    with pytest.raises(ValueError, match="no factors"):
        domain.parent_bin("font", torch.zeros(3))


@pytest.mark.parametrize("kind", list(MethodKind))
def test_only_the_latent_kind_runs_on_the_domain(kind):
    reason = kind_spec(kind).supports(get_domain("glyphs"))
    if kind == MethodKind.LATENT:
        assert reason is None
    else:
        assert reason is not None and "glyphs" in reason


def test_the_measurement_report_covers_every_scenario(capsys):
    from cfcheck.domains.glyphs import measure

    rows = measure.scenario_rows()
    assert [row["scenario"] for row in rows] == list(SCENARIOS)
    for row in rows:
        expected = get_scenario(row["scenario"]).correlation
        assert abs(row["correlation"] - expected) <= 4 * row["correlation_se"]
        assert abs(row["label_noise"] - LABEL_NOISE) <= _binomial_tolerance(LABEL_NOISE, row["n"])
        assert row["shift_range"] <= 5.0
    assert measure.rendering_speed(n=256, repeats=1) > 0
