"""Random-classifier sanity metrics and metric cards."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import rankdata, spearmanr

from cfcheck.metrics.cards import CARDS, Bar, MetricCard, format_card, get_card
from cfcheck.metrics.sanity import average_ranks, ota_gain, randomisation_similarity
from cfcheck.reporting.card_evidence import bundled_evidence

REQUIRED_CARDS = {
    "target_accuracy",
    "original_accuracy",
    "tcv",
    "oracle_score",
    "oracle_target_accuracy",
    "committee_oracle_target_accuracy",
    "lvs_target",
    "lvs_unrelated",
    "d1",
    "d1_5",
    "d2",
    "elastic_net",
    "perceptual_distance",
    "lpips",
    "fid_target",
    "fid_domain",
    "kid_target",
    "kid_domain",
    "diversity",
    "coverage",
    "randomisation_similarity",
    "ota_gain",
    "cascading_randomisation_similarity",
}


def test_ota_gain_matches_loop() -> None:
    cf_hits = torch.tensor([1.0, 1.0, 0.0, 0.0, 1.0])
    x_hits = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0])
    expected = [c - x for c, x in zip(cf_hits.tolist(), x_hits.tolist())]
    result = ota_gain(cf_hits, x_hits)
    assert result.dtype == torch.float32
    assert result.tolist() == expected == [0.0, 1.0, 0.0, -1.0, 1.0]
    with pytest.raises(ValueError, match="same shape"):
        ota_gain(cf_hits, x_hits[:3])
    with pytest.raises(ValueError, match="0/1 indicators"):
        ota_gain(cf_hits * 2, x_hits)


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 12)),
        elements=st.sampled_from([0.0, 0.5, 1.0, -2.0, 3.25, 1e-300, -0.0]),
    )
)
def test_average_ranks_match_scipy_rankdata(values: np.ndarray) -> None:
    # few distinct values, so most rows have runs of ties (and -0.0 == 0.0 ties)
    np.testing.assert_array_equal(average_ranks(values), rankdata(values, axis=1))


def test_average_ranks_known_case_and_errors() -> None:
    np.testing.assert_array_equal(
        average_ranks(np.array([[2.0, 2.0, 2.0], [3.0, 1.0, 2.0]])), [[2.0, 2.0, 2.0], [3.0, 1.0, 2.0]]
    )
    with pytest.raises(ValueError, match="2-D"):
        average_ranks(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        average_ranks(np.array([[0.0, np.nan]]))


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


#: the barred VCE cards whose controls' values morpho's calibration file keeps
VCE_CARDS_CALIBRATED_ON_MORPHO = {
    "target_accuracy",
    "original_accuracy",
    "tcv",
    "oracle_score",
    "oracle_target_accuracy",
    "committee_oracle_target_accuracy",
    "lvs_target",
    "lvs_unrelated",
    "d1",
    "d1_5",
    "d2",
    "elastic_net",
    "perceptual_distance",
    "mnac",
    "fid_target",
    "fid_domain",
    "kid_target",
    "kid_domain",
    "im1",
    "ota_gain",
    "randomisation_similarity",
    "cascading_randomisation_similarity",
    "density_target",
    "density_domain",
    "coverage_target",
    "coverage_domain",
}
#: the barred SCM cards whose controls' values (`cfcheck calibrate --methods scm_truth ...`) it keeps too
SCM_CARDS_CALIBRATED_ON_MORPHO = {
    "composition_l1",
    "composition_perceptual",
    "composition_embedding",
    "effectiveness_error",
    "effectiveness_accuracy",
    "effectiveness_predictor_error",
    "effectiveness_predictor_accuracy",
    "preservation_error",
    "preservation_accuracy",
    "preservation_predictor_error",
    "preservation_predictor_accuracy",
    "scm_fid",
    "scm_kid",
}


def test_cards_cover_the_required_metrics_and_are_consistent() -> None:
    assert set(CARDS) >= REQUIRED_CARDS
    for key, card in CARDS.items():
        assert card.key == key
        assert card.direction in ("higher", "lower", "none")
        assert card.range[0] <= card.range[1]
        assert card.formula and card.citation and card.normalisation and card.abstentions and card.units


@pytest.mark.parametrize("key", sorted(k for k, c in CARDS.items() if c.bar is not None or c.profile_bars))
def test_every_bar_points_the_metric_direction_and_has_a_measured_rationale(key) -> None:
    card = get_card(key)
    for bar in (card.bar, *card.profile_bars.values()):
        if bar is None:
            continue
        assert (bar.kind, card.direction) in (("min", "higher"), ("max", "lower")), (key, bar, card.direction)
        if bar.relative == "absolute":
            assert card.range[0] <= bar.bound <= card.range[1]
    # a rationale names the controls the bar sits between; what they reached is either the calibration
    # data of a bundled domain the cards were calibrated on, shown beside the card, or quoted in the
    # rationale with the command that measured it
    assert "CALIBRATE" not in card.rationale
    measured = bundled_evidence(key)
    assert measured or re.search(r"`(cfcheck|python)\b[^`]*`", card.rationale), card.rationale
    if key in VCE_CARDS_CALIBRATED_ON_MORPHO | SCM_CARDS_CALIBRATED_ON_MORPHO:
        assert any(sentence.startswith("on morpho, quick profile") for sentence in measured), measured


def test_bar_resolution_and_text() -> None:
    assert Bar(0.8, "min").passes(0.8) and not Bar(0.8, "min").passes(0.79)
    relative = Bar(1.5, "max", "times_floor")
    assert relative.resolve(4.0) == 6.0 and relative.passes(5.9, floor=4.0) and not relative.passes(6.1, floor=4.0)
    assert Bar(0.1, "max", "plus_floor").resolve(-0.05) == pytest.approx(0.05)
    assert relative.describe(4.0) == "<= 1.5 × floor = 6"
    with pytest.raises(ValueError, match="needs a finite floor"):
        relative.resolve(None)
    with pytest.raises(ValueError, match="kind"):
        Bar(1.0, "between")


def test_get_card_lists_keys_on_error() -> None:
    with pytest.raises(KeyError, match="known cards: .*target_accuracy"):
        get_card("accuracy")


def test_format_card_shows_bar_and_rationale() -> None:
    card = get_card("committee_oracle_target_accuracy")
    text = format_card(card)
    assert text.splitlines()[0] == f"{card.name} [committee_oracle_target_accuracy]"
    assert f"bar (all profiles): {card.bar.describe()}" in text
    assert f"rationale:     {card.rationale}" in text
    assert "none (reported without a verdict)" in format_card(get_card("lpips"))
    measured = format_card(card, ["on morpho, quick profile: truth 1", "on gmm, quick profile: truth 0.9"])
    rationale_line = measured.splitlines().index(f"  rationale:     {card.rationale}")
    assert measured.splitlines()[rationale_line + 1 : rationale_line + 3] == [
        "  measured:      on morpho, quick profile: truth 1",
        "  measured:      on gmm, quick profile: truth 0.9",
    ]
    assert "measured:" not in text  # no sentence given, none printed


def test_card_is_frozen_and_validated() -> None:
    card = get_card("tcv")
    with pytest.raises(dataclasses.FrozenInstanceError):
        card.direction = "lower"
    with pytest.raises(ValueError, match="direction"):
        dataclasses.replace(card, direction="up")
    with pytest.raises(ValueError, match="range"):
        MetricCard("k", "n", "f", "higher", (1.0, 0.0), "u", "n", "a", "c", True)
    with pytest.raises(ValueError, match="rationale"):
        MetricCard("k", "n", "f", "higher", (0.0, 1.0), "u", "n", "a", "c", True, bar=Bar(0.5, "min"))


def test_the_attribution_randomisation_cards_say_what_their_interval_resamples_and_name_no_bundled_domain() -> None:
    from pathlib import Path

    import cfcheck.kinds.attribution.cards.randomisation as module
    from cfcheck.domains.registry import registered_domains

    text = Path(module.__file__).read_text(encoding="utf-8").lower()
    assert not [name for name in registered_domains() if name.lower() in text]
    for key in ("attribution_randomisation_similarity", "attribution_randomisation_similarity_support"):
        card = get_card(key)
        assert "random draws and inputs" in card.interval and "randomisation_draws" in card.notes
        assert f"bootstrap over {card.interval})" in format_card(card)
    for key in (
        "attribution_cascading_randomisation_similarity",
        "attribution_cascading_randomisation_similarity_support",
    ):
        assert get_card(key).interval == "" and "one draw" in get_card(key).notes
        assert "yes (bootstrap over inputs)" in format_card(get_card(key))
