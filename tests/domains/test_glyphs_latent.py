"""The glyph domain's latent space: layout, standardisation on the train split, exact decoding of
every sample's categories, the causal oracle, the embeddings and the proximity radii."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains.glyphs import LATENT_NAMES, SCENARIOS, GlyphsDomain, LatentStandardiser, raw_latents
from cfcheck.domains.glyphs.latent import CHARACTER_EMBEDDING, FONT_EMBEDDING, fibonacci_sphere, proximity_radius
from cfcheck.domains.glyphs.splits import split_factors


def test_latent_layout():
    assert LATENT_NAMES == (
        "character_0",
        "character_1",
        "character_2",
        "font_0",
        "font_1",
        "font_2",
        "x",
        "y",
        "rotation",
        "scale",
        "inverse",
    )
    domain = GlyphsDomain()
    assert domain.latent_dim == 11
    assert (domain.character_slice, domain.font_slice, domain.continuous_slice) == (
        slice(0, 3),
        slice(3, 6),
        slice(6, 11),
    )


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_train_latents_are_standardised_and_other_splits_nearly(scenario):
    domain = GlyphsDomain(scenario)
    train = domain.latents("train").double()
    assert train.shape == (30_000, 11) and domain.latents("train").dtype == torch.float32
    torch.testing.assert_close(train.mean(0), torch.zeros(11, dtype=torch.float64), atol=1e-5, rtol=0)
    torch.testing.assert_close(train.std(0), torch.ones(11, dtype=torch.float64), atol=1e-5, rtol=0)
    test = domain.latents("test").double()  # 5000 independent draws: means within ~4/√5000
    assert float(test.mean(0).abs().max()) < 0.06 and float((test.std(0) - 1).abs().max()) < 0.06


def test_latents_carry_the_factors_exactly():
    domain = GlyphsDomain("fonts10-corr95")
    factors = split_factors("fonts10-corr95", "test")
    raw = domain.standardiser.unstandardise(domain.latents("test"))
    torch.testing.assert_close(raw, raw_latents(factors), atol=1e-5, rtol=1e-5)
    continuous = raw[:, 6:]
    torch.testing.assert_close(continuous[:, 0], factors.shift_x, atol=1e-5, rtol=0)
    torch.testing.assert_close(continuous[:, 2], factors.rotation, atol=1e-5, rtol=0)
    torch.testing.assert_close(continuous[:, 3], factors.scale, atol=1e-5, rtol=0)
    assert torch.equal(continuous[:, 4].round(), factors.inverse)
    # the split container's latents are the same
    assert torch.equal(domain.split("test", 50).latents, domain.latents("test", 50))


@pytest.mark.parametrize("split", ["train", "test"])
def test_decoding_recovers_character_font_and_the_causal_label(split):
    domain = GlyphsDomain("fonts6-corr50")
    factors = split_factors("fonts6-corr50", split)
    z = domain.latents(split)
    decoded = domain.decode_categories(z)
    assert torch.equal(decoded["character"], factors.character) and torch.equal(decoded["font"], factors.font)
    assert torch.equal(domain.causal_oracle(z), factors.character % 2)
    # batched shapes (N×K×11, as counterfactual sets come) decode row by row
    stacked = torch.stack([z[:10], z[10:20]], dim=1)
    assert domain.causal_oracle(stacked).shape == (10, 2)
    assert torch.equal(domain.causal_oracle(stacked)[:, 1], factors.character[10:20] % 2)


def test_moving_the_character_embedding_flips_the_causal_oracle_and_the_font_does_not():
    domain = GlyphsDomain()
    z = domain.latents("test", 200).clone()
    parity = domain.causal_oracle(z)
    target = (domain.decode_categories(z)["character"] + 1) % 48  # the next character: other parity
    moved = z.clone()
    moved[:, domain.character_slice] = domain.character_embedding[target]
    assert torch.equal(domain.causal_oracle(moved), 1 - parity)
    refonted = z.clone()
    refonted[:, domain.font_slice] = domain.font_embedding[(domain.decode_categories(z)["font"] + 5) % 22]
    assert torch.equal(domain.causal_oracle(refonted), parity)


def test_embeddings_are_well_separated_and_radii_reach_every_category():
    sphere = fibonacci_sphere(48)
    torch.testing.assert_close(sphere.norm(dim=1), torch.full((48,), 3**0.5, dtype=torch.float64))
    for table in (CHARACTER_EMBEDDING, FONT_EMBEDDING):
        distances = torch.cdist(table.double(), table.double()) + 1e9 * torch.eye(len(table), dtype=torch.float64)
        assert float(distances.min()) > 0.4
    domain = GlyphsDomain()
    radii = domain.proximity_radii()
    assert radii["continuous"] == 1.0
    for name, table in (("character", domain.character_embedding), ("font", domain.font_embedding)):
        l1 = torch.cdist(table.double(), table.double(), p=1)
        assert radii[name] == pytest.approx(float(l1.max()))
        assert radii[name] == proximity_radius(table)


def test_standardiser_box_and_validation():
    domain = GlyphsDomain()
    box = domain.standardiser
    train = domain.latents("train")
    torch.testing.assert_close(box.low, train.min(0).values, atol=1e-5, rtol=0)
    torch.testing.assert_close(box.high, train.max(0).values, atol=1e-5, rtol=0)
    far = torch.full((2, 11), 50.0)
    assert torch.equal(box.clip(far), box.high.expand(2, 11)) and torch.equal(box.clip(-far), box.low.expand(2, 11))
    with pytest.raises(ValueError, match="constant"):
        LatentStandardiser.fit(torch.ones(5, 11))
    with pytest.raises(ValueError, match="N×11"):
        LatentStandardiser.fit(torch.ones(5, 4))
    with pytest.raises(ValueError, match=r"\(\.\.\., 11\)"):
        domain.causal_oracle(torch.zeros(3, 10))
    with pytest.raises(ValueError, match="finite"):
        domain.causal_oracle(torch.full((3, 11), float("nan")))


def test_the_latent_layout_scores_known_counterfactuals():
    """Three counterfactuals per input: another character of the other parity (a causal flip for
    a classifier that reads only the font), another font of the other parity (a non-causal flip),
    and a small translation (neither). S# is 2: the two flips move different embeddings."""
    from cfcheck.metrics.synbols import synbols_scores

    domain = GlyphsDomain()
    layout = domain.latent_layout()
    assert [g.name for g in layout.categorical] == ["character", "font"] and layout.continuous == (6, 11)
    assert [g.radius for g in layout.categorical] == [
        domain.proximity_radii()["character"],
        domain.proximity_radii()["font"],
    ]
    z = domain.latents("test", 40)
    decoded = domain.decode_categories(z)
    z_cf = z[:, None, :].repeat(1, 3, 1)
    z_cf[:, 0, domain.character_slice] = domain.character_embedding[(decoded["character"] + 1) % 48]
    z_cf[:, 1, domain.font_slice] = domain.font_embedding[(decoded["font"] + 1) % 22]
    z_cf[:, 2, 6] += 0.5

    def font_classifier(latents):
        return domain.decode_categories(latents)["font"] % 2

    scores = synbols_scores(
        z, z_cf, layout, font_classifier(z), font_classifier(z_cf), domain.causal_oracle(z), domain.causal_oracle(z_cf)
    )
    assert scores.categories.cf[:, 0].all() and scores.categories.ncf[:, 1].all()
    assert not scores.categories.sce[:, 2].any() and not scores.categories.trivial.any()
    assert scores.s_sharp.tolist() == [2] * 40
    # a jump across the whole character space is not proximal
    far = z_cf.clone()
    far[:, 0, domain.character_slice] = z[:, domain.character_slice] + layout.categorical[0].radius
    rescored = synbols_scores(
        z, far, layout, font_classifier(z), font_classifier(far), domain.causal_oracle(z), domain.causal_oracle(far)
    )
    assert not rescored.categories.sce[:, 0].any() and rescored.s_sharp.tolist() == [1] * 40


def test_four_different_explanations_count_four_with_the_concatenated_cosine_and_one_when_summed():
    """Character, font, x and y moves, all taken as successful: the concatenated cosine (the
    default) keeps all four; the reference code's sum of per-part cosines keeps one, because the
    parts a counterfactual leaves alone still have identical residual softmax vectors."""
    from cfcheck.metrics.synbols import synbols_scores

    domain = GlyphsDomain()
    z = domain.latents("test", 40)
    decoded = domain.decode_categories(z)
    z_cf = z[:, None, :].repeat(1, 4, 1)
    z_cf[:, 0, domain.character_slice] = domain.character_embedding[(decoded["character"] + 1) % 48]
    z_cf[:, 1, domain.font_slice] = domain.font_embedding[(decoded["font"] + 1) % 22]
    z_cf[:, 2, 6] += 0.5
    z_cf[:, 3, 7] += 0.5
    zeros, ones = torch.zeros(40, dtype=torch.int64), torch.ones(40, 4, dtype=torch.int64)
    every_one_flips = (z, z_cf, domain.latent_layout(), zeros, ones, zeros, torch.zeros_like(ones))
    assert synbols_scores(*every_one_flips).s_sharp.tolist() == [4] * 40
    assert synbols_scores(*every_one_flips, cosine="summed").s_sharp.tolist() == [1] * 40
