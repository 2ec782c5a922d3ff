"""The latent kind's negative controls: identity, noise and Bex et al.'s diversity-gaming repeater."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cfcheck.kinds.latent.methods.controls import LatentIdentity, LatentNoise, LatentRepeater
from cfcheck.kinds.latent.methods.gradient_explainers import DiCE
from cfcheck.metrics.synbols import LatentLayout, synbols_scores


def _scores(z, z_cf, classifier):
    n, k, d = z_cf.shape
    label = classifier(z).argmax(1)
    label_cf = classifier(z_cf.reshape(n * k, d)).argmax(1).reshape(n, k)
    oracle = torch.zeros(n, dtype=torch.int64)  # the causal label never changes here
    layout = LatentLayout((), (0, d), continuous_radius=10.0)
    return synbols_scores(z, z_cf, layout, label, label_cf, oracle, torch.zeros(n, k, dtype=torch.int64))


def test_identity_returns_the_input_k_times_and_scores_zero(toys):
    z = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    z_cf = LatentIdentity(k=5).explain(z, toys.Halfspace([1.0, 0.0, 0.0]), nn.Identity())
    assert torch.equal(z_cf, z[:, None].expand(4, 5, 3))
    scores = _scores(z, z_cf, toys.Halfspace([1.0, 0.0, 0.0]))
    assert float(scores.s_sharp.sum()) == 0 and float(scores.rates["ef"].sum()) == 0


def test_noise_is_seeded_and_has_the_stated_spread(toys):
    z = torch.zeros(200, 4)
    noise = LatentNoise(k=10, spread=0.5)
    first = noise.explain(z, toys.Halfspace([1.0, 0, 0, 0]), nn.Identity(), rng=torch.Generator().manual_seed(3))
    again = noise.explain(z, toys.Halfspace([1.0, 0, 0, 0]), nn.Identity(), rng=torch.Generator().manual_seed(3))
    assert torch.equal(first, again)
    assert float(first.std()) == pytest.approx(0.5, rel=0.05)


def test_the_repeater_games_dpp_diversity_but_not_s_sharp(toys):
    """Every counterfactual flips (EF = 1), the DPP diversity DiCE maximises is higher than K copies
    of one counterfactual, yet S# keeps one: the K perturbations share one direction."""
    classifier = toys.Halfspace([2.0, 0.3, -0.2, 0.1])
    z = torch.tensor([[-0.5, 0.2, 0.1, 0.0], [0.4, -0.3, 0.2, 0.1], [-0.05, 0.0, 0.0, 0.0]])
    z_cf = LatentRepeater(k=6).explain(z, classifier, nn.Identity(), rng=torch.Generator().manual_seed(0))
    scores = _scores(z, z_cf, classifier)
    assert torch.equal(scores.rates["ef"], torch.ones(3, dtype=scores.rates["ef"].dtype))
    assert scores.s_sharp.tolist() == [1, 1, 1]
    # the sensitive coordinate (0) moved just across the boundary, the same for all K
    torch.testing.assert_close(z_cf[..., 0], z_cf[:, :1, 0].expand(3, 6))
    assert bool((z_cf[..., 0] * z[:, None, 0] < 0).all())
    copies = z_cf[:, :1].expand(3, 6, 4)
    assert bool((DiCE.dpp_diversity(z_cf) > DiCE.dpp_diversity(copies)).all())
