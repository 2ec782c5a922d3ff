"""Random-classifier sanity metrics and metric cards."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from cfcheck.metrics.cards import CARDS, MetricCard, format_card, get_card
from cfcheck.metrics.sanity import ota_gain, randomisation_similarity

REQUIRED_CARDS = {
    "target_accuracy", "original_accuracy", "tcv", "oracle_score", "oracle_target_accuracy",
    "committee_oracle_target_accuracy", "lvs", "d1", "d1_5", "d2", "elastic_net", "perceptual_distance",
    "lpips", "fid_target", "fid_domain", "kid_target", "kid_domain", "diversity", "coverage", "randomisation_similarity",
    "ota_gain",
}


def test_ota_gain_matches_loop() -> None:
    oracle_cf = torch.tensor([1, 2, 2, 0, 3])
    oracle_x = torch.tensor([1, 0, 2, 1, 1])
    target = torch.tensor([1, 2, 0, 1, 3])
    expected = [float(c == t) - float(x == t) for c, x, t in zip(oracle_cf.tolist(), oracle_x.tolist(), target.tolist())]
    result = ota_gain(oracle_cf, oracle_x, target)
    assert result.dtype == torch.float32
    assert result.tolist() == expected == [0.0, 1.0, 0.0, -1.0, 1.0]
    with pytest.raises(ValueError, match="same length"):
        ota_gain(oracle_cf, oracle_x[:3], target)


def test_randomisation_similarity_matches_scipy_spearman() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(4, 1, 6, 6, generator=gen)
    trained = torch.rand(4, 1, 6, 6, generator=gen)
    random = x.clone()
    random[:, :, :3] = torch.rand(4, 1, 3, 6, generator=gen)  # many zero changes: ties
    result = randomisation_similarity(x, trained, random)
    expected = [
        spearmanr((trained[i] - x[i]).abs().flatten().double(), (random[i] - x[i]).abs().flatten().double())[0]
        for i in range(4)
    ]
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5)


def test_randomisation_similarity_known_cases() -> None:
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(3, 1, 5, 5, generator=gen) * 0.5
    cf = (x + torch.rand(3, 1, 5, 5, generator=gen) * 0.5).clamp(0, 1)
    assert torch.allclose(randomisation_similarity(x, cf, cf), torch.ones(3))
    # A method that leaves the input unchanged has a constant change map: undefined.
    assert bool(torch.isnan(randomisation_similarity(x, cf, x)).all())
    with pytest.raises(ValueError, match="cf_random"):
        randomisation_similarity(x, cf, x[:2])


def test_cards_cover_the_required_metrics_and_are_consistent() -> None:
    assert REQUIRED_CARDS <= set(CARDS)
    for key, card in CARDS.items():
        assert card.key == key
        assert card.direction in ("higher", "lower", "none")
        assert card.range[0] <= card.range[1]
        assert card.formula and card.citation and card.normalisation and card.abstentions and card.units
    assert get_card("fid_target").per_sample is False
    assert get_card("target_accuracy").abstentions == "counted as failures (0)"
    assert get_card("d2").abstentions == "excluded; coverage reported"
    assert get_card("d1").range == (0.0, math.inf)
    assert "lin" in get_card("perceptual_distance").notes


def test_get_card_lists_keys_on_error() -> None:
    with pytest.raises(KeyError, match="known cards: .*target_accuracy"):
        get_card("accuracy")


def test_format_card() -> None:
    text = format_card(get_card("kid_target"))
    assert text.splitlines()[0] == "KID to the target class [kid_target]"
    assert "lower is better" in text and "(−∞, ∞)" in text and "Bińkowski" in text
    assert "[0, 1]" in format_card(get_card("tcv"))


def test_card_is_frozen_and_validated() -> None:
    card = get_card("tcv")
    with pytest.raises(dataclasses.FrozenInstanceError):
        card.direction = "lower"
    with pytest.raises(ValueError, match="direction"):
        dataclasses.replace(card, direction="up")
    with pytest.raises(ValueError, match="range"):
        MetricCard("k", "n", "f", "higher", (1.0, 0.0), "u", "n", "a", "c", True)
