"""Every derived-seed stream gives exactly the seeds its call sites computed by hand before
cfcheck.core.seeds existed: the shipped weights, the calibration values and the published
scorecards were produced on those seeds. Each formula below is the old expression, written out."""

from __future__ import annotations

import itertools

import pytest

from cfcheck.core.seeds import (
    EPOCH_ORDER,
    FLOW_EPOCH_ORDER,
    PAIRED_REFERENCE,
    RANDOM_DRAWS,
    REALISM_DRAWS,
    SMALL_NET_EPOCH_ORDER,
    TASK_INPUTS,
    Stream,
    seeded,
)
from cfcheck.kinds.attribution import spec as attribution_spec
from cfcheck.kinds.attribution.randomisation import draw_seeds
from cfcheck.kinds.attribution.removal import REMOVAL_SEED, RETRAINING
from cfcheck.kinds.latent import spec as latent_spec
from cfcheck.kinds.scm import realism as scm_realism
from cfcheck.kinds.scm import spec as scm_spec

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
    assert seeded(base, REALISM_DRAWS, 1) == 7919 * base + 1  # the VCE realism suite
    assert seeded(base, REALISM_DRAWS, 2) == 7919 * base + 2  # the SCM realism generator
    assert seeded(base, PAIRED_REFERENCE, 7) == 10_007 * base + 7  # class 7's reference rows for paired tests
    assert seeded(base, REALISM_DRAWS, scm_realism._REFERENCE_SEED_OFFSET) == 1_000_003 + 7919 * base


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
