"""Every derived-seed stream gives exactly the seeds its call sites computed by hand before
cfcheck.core.seeds existed: the shipped weights, the calibration values and the published
scorecards were produced on those seeds. Each formula below is the old expression, written out."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

import cfcheck
from cfcheck.core.seeds import (
    BATCH_NOISE,
    EPOCH_ORDER,
    FLOW_EPOCH_ORDER,
    PAIRED_REFERENCE,
    RANDOM_DRAWS,
    REALISM_DRAWS,
    SMALL_NET_EPOCH_ORDER,
    TASK_INPUTS,
    TASK_SEEDS,
    TRAINING_NOISE,
    Stream,
    seeded,
)
from cfcheck.domains.glyphs import training as glyph_training
from cfcheck.kinds.attribution import spec as attribution_spec
from cfcheck.kinds.attribution.randomisation import draw_seeds
from cfcheck.kinds.attribution.removal import REMOVAL_SEED, RETRAINING, retraining_seed
from cfcheck.kinds.latent import spec as latent_spec
from cfcheck.kinds.scm import realism as scm_realism
from cfcheck.kinds.scm import spec as scm_spec
from cfcheck.models.classifiers.training import AUGMENTATION_DRAWS
from cfcheck.models.generative.gan import training as gan_training
from cfcheck.models.generative.vae import counterfactual_training
from cfcheck.models.generative.vae import recipe as vae_recipe
from cfcheck.profiles import BUILTIN_PROFILES

BASES = [0, 1, 2, 3, 7, 41, 1234, 20_231, 99_991]
SMALL = range(12)


@pytest.mark.parametrize("base", BASES)
def test_epoch_orders_match_the_training_loops_formulas(base):
    for epoch in range(0, 400, 7):
        assert seeded(base, EPOCH_ORDER, epoch) == base * 100_003 + epoch  # diffusion, VAE, epoch_batches
        assert seeded(base, SMALL_NET_EPOCH_ORDER, epoch) == base * 1009 + epoch  # autoencoder, predictors
        assert seeded(base, FLOW_EPOCH_ORDER, epoch) == base * 7919 + epoch  # flows


@pytest.mark.parametrize("base", BASES)
def test_task_inputs_match_each_kinds_formula(base):
    for pair_set in ("ideal", "other"):  # vce/tasks.py
        assert seeded(base, TASK_INPUTS, 0 if pair_set == "ideal" else 1) == 10_007 * base + (pair_set != "ideal")
    for offset in (attribution_spec.SEED_OFFSET + i for i in range(3)):  # attribution spec and reproduction
        assert seeded(base, TASK_INPUTS, offset) == 10_007 * base + offset
    for position in SMALL:  # the SCM and latent kinds: a factor's or variant's position
        for kind_offset in (scm_spec.SEED_OFFSET, latent_spec.SEED_OFFSET):
            assert seeded(base, TASK_INPUTS, kind_offset, position) == 10_007 * base + 101 * position + kind_offset
    assert (scm_spec.SEED_OFFSET, latent_spec.SEED_OFFSET, attribution_spec.SEED_OFFSET) == (3, 7, 5)


@pytest.mark.parametrize("base", BASES)
def test_random_draws_removal_and_realism_match_their_formulas(base):
    assert draw_seeds(base, 6) == tuple(base * 10_007 + k for k in range(1, 6))
    assert all(seeded(base, RANDOM_DRAWS, k) == base * 10_007 + k for k in SMALL)
    assert seeded(base, RETRAINING) == REMOVAL_SEED + base == 20_231 + base
    # a removal run's further retraining draws (draw 0 is RETRAINING's)
    assert [retraining_seed(base, k) for k in SMALL if k] == [1000 * base + 1_020_231 + k for k in SMALL if k]
    assert seeded(base, REALISM_DRAWS, 1) == 7919 * base + 1  # the VCE realism suite
    assert seeded(base, REALISM_DRAWS, 2) == 7919 * base + 2  # the SCM realism generator
    assert seeded(base, PAIRED_REFERENCE, 7) == 10_007 * base + 7  # class 7's reference rows for paired tests
    assert seeded(base, REALISM_DRAWS, scm_realism._REFERENCE_SEED_OFFSET) == 1_000_003 + 7919 * base


@pytest.mark.parametrize("base", BASES)
def test_training_streams_match_the_training_loops_formulas(base):
    # diffusion, conditional VAE, GAN, unconditional VAE, counterfactual fine-tuning: seed + 1
    assert seeded(base, TRAINING_NOISE) == base + 1
    assert seeded(base, AUGMENTATION_DRAWS) == base + 1  # classifier recipes: recipe.seed + 1
    assert seeded(base, glyph_training.TRAINING_ORDER) == base + 1  # glyph models: recipe.seed + 1
    assert seeded(base, glyph_training.CANONICAL_ORDER) == base + 2  # glyph generator pre-training: recipe.seed + 2
    assert seeded(base, gan_training.ENCODER_FINETUNE_ORDER) == base + 7  # epoch_batches(n, b, seed + 7, ...)
    assert seeded(base, gan_training.COUNTERFACTUAL_FINETUNE) == base + 11  # counterfactual_finetune(seed=seed + 11)
    assert seeded(base, vae_recipe.COUNTERFACTUAL_FINETUNE) == base + 5  # counterfactual_finetune(seed=config.seed + 5)
    assert seeded(base, counterfactual_training.PREDICTOR_BLENDS) == base + 7  # the predictor's mixup: seed + 7
    assert seeded(base, counterfactual_training.COUNTERFACTUAL_PARTNERS) == base + 2  # the partners c*: seed + 2
    assert seeded(base, counterfactual_training.COUNTERFACTUAL_ORDER) == base + 3  # epoch_batches(..., seed + 3, ...)
    for epoch in range(0, 40, 3):  # the orders those base seeds give, as epoch_batches draws them
        assert (
            seeded(seeded(base, gan_training.ENCODER_FINETUNE_ORDER), EPOCH_ORDER, epoch)
            == (base + 7) * 100_003 + epoch
        )
        assert (
            seeded(seeded(base, counterfactual_training.COUNTERFACTUAL_ORDER), EPOCH_ORDER, epoch)
            == (base + 3) * 100_003 + epoch
        )


@pytest.mark.parametrize("base", BASES)
def test_task_seeds_match_the_profiles_formula(base):
    assert all(seeded(base, TASK_SEEDS, i) == base + i for i in SMALL)
    for profile in BUILTIN_PROFILES.values():  # Profile.task_seeds: base_seed + i
        assert profile.task_seeds(base) == tuple(base + i for i in range(profile.seeds))


@pytest.mark.parametrize("base", BASES)
def test_batch_noise_matches_the_batched_attributions_formula(base):
    for start in range(0, 2000, 250):  # attribute_batched: seed + the batch's first index
        assert seeded(base, BATCH_NOISE, start) == base + start


def test_missing_parts_count_as_zero_and_extra_parts_are_refused():
    assert seeded(5, TASK_INPUTS) == seeded(5, TASK_INPUTS, 0, 0) == 50_035
    assert seeded(5, Stream("plain")) == 5
    with pytest.raises(ValueError, match="'epoch order' takes at most 1 part"):
        seeded(1, EPOCH_ORDER, 1, 2)


def test_streams_are_distinct_where_their_ranges_meet():
    """Within one base seed, the epochs of one training (below 1009) never give the same seed as
    an earlier or later base's under the same stream."""
    for stream in (EPOCH_ORDER, SMALL_NET_EPOCH_ORDER, FLOW_EPOCH_ORDER):
        seeds = [seeded(base, stream, epoch) for base, epoch in itertools.product(range(20), range(1000))]
        assert len(seeds) == len(set(seeds)), stream.name


def test_no_seed_is_derived_by_hand():
    """No expression of the package adds to, subtracts from, multiplies or reduces a seed (a name
    ending in ``seed``) by hand: a derived seed goes through :func:`seeded` and a named stream."""
    package = Path(cfcheck.__file__).parent
    seedy = re.compile(r"(^|_)seed$", re.IGNORECASE)
    by_hand = set()
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.BitXor)):
                names = [getattr(side, "id", getattr(side, "attr", "")) for side in (node.left, node.right)]
                if any(seedy.search(name) for name in names):
                    by_hand.add((path.relative_to(package).as_posix(), ast.unparse(node)))
    assert by_hand == set(), sorted(by_hand)
