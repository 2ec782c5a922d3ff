"""Derived seeds: every seed computed from another one goes through :func:`seeded` and a named
:class:`Stream`, so each stream's arithmetic is written once.

A stream's seed is ``base × stride + start + Σ part_i × weight_i``. The numbers are fixed: the
shipped weights were trained, and the published scorecards and calibration values measured, on
the seeds they give, so a stream never changes (``tests/test_seeds.py`` pins every stream to its
formula written out by hand). A new purpose gets a new stream.

The streams of this module are the engine's and those several model families share; a kind's own
streams (its tasks' inputs, the removal retraining) live in the kind's folder, built on
:data:`TASK_STRIDE`, and a model family's own (its augmentation, its fine-tuning phases) beside
its training loop.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BATCH_NOISE",
    "EPOCH_ORDER",
    "FLOW_EPOCH_ORDER",
    "PAIRED_REFERENCE",
    "RANDOM_DRAWS",
    "REALISM_DRAWS",
    "SMALL_NET_EPOCH_ORDER",
    "TASK_INPUTS",
    "TASK_SEEDS",
    "TASK_STRIDE",
    "TRAINING_NOISE",
    "Stream",
    "seeded",
]

#: the stride of a task seed's streams: a task's streams with offsets below it are disjoint from
#: the next task seed's
TASK_STRIDE = 10_007


@dataclass(frozen=True)
class Stream:
    """A family of derived seeds, ``base × stride + start + Σ part_i × weight_i``.

    Attributes:
        name: what the seeds are for (shown in error messages).
        stride: the multiplier of the base seed.
        start: the offset added to every seed of the stream.
        weights: the multiplier of each part (an epoch, an input's position, a draw's index).
    """

    name: str
    stride: int = 1
    start: int = 0
    weights: tuple[int, ...] = (1,)


def seeded(base: int, stream: Stream, *parts: int) -> int:
    """The seed of ``stream`` for ``base`` and ``parts`` (missing parts count as 0).

    >>> seeded(3, EPOCH_ORDER, 2)
    300011
    """
    if len(parts) > len(stream.weights):
        raise ValueError(f"the stream {stream.name!r} takes at most {len(stream.weights)} part(s), got {len(parts)}")
    return base * stream.stride + stream.start + sum(part * weight for part, weight in zip(parts, stream.weights))


#: a run's task seeds from its base seed (``--cfcheck-seed``; part: the task's index, below the
#: profile's ``seeds``)
TASK_SEEDS = Stream("task seeds")
#: a task's inputs (parts: the kind's offset, below 101, and the position of the task's factor or
#: variant, where the kind has one)
TASK_INPUTS = Stream("task inputs", stride=TASK_STRIDE, weights=(1, 101))
#: the re-initialisation seeds of a task's random networks (part: the draw, from 1)
RANDOM_DRAWS = Stream("random network draws", stride=TASK_STRIDE)
#: the order of a training epoch's examples (part: the epoch), as :func:`cfcheck.models.generative.base.epoch_batches`
#: draws it: the diffusion models, the VAEs and the GANs
EPOCH_ORDER = Stream("epoch order", stride=100_003)
#: the same for the autoencoders, the unconditional VAE and the attribute predictors
SMALL_NET_EPOCH_ORDER = Stream("epoch order (autoencoders, predictors)", stride=1009)
#: the same for the normalising flows
FLOW_EPOCH_ORDER = Stream("epoch order (flows)", stride=7919)
#: a realism score's random draws from a task seed (part: which draw)
REALISM_DRAWS = Stream("realism draws", stride=7919)
#: the real reference rows kept beside a set-level score for paired comparisons (part: the class)
PAIRED_REFERENCE = Stream("paired-test reference rows", stride=TASK_STRIDE)
#: the generator of a training loop's own random draws, one per training: the diffusion model's
#: timesteps and noise, the conditional VAEs' and the unconditional VAE's sampling noise, the GAN's
#: latent draws, the counterfactual fine-tuning's fit term
TRAINING_NOISE = Stream("training noise", start=1)
#: the generator of one batch of a batched computation that takes a generator (part: the batch's
#: first index), so the draws depend on the caller's seed and the batching alone
BATCH_NOISE = Stream("batch noise")
