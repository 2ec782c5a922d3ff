"""The random networks of the model-randomisation test and the similarity table they give.

Adebayo et al.'s comparison of a trained classifier's saliency maps with a random network's
depends on which random network was drawn: one draw fixes it, and an interval over inputs alone
then says nothing about the draw. The attribution kind draws ``randomisation_draws`` random
networks per task seed: the domain's own random classifier (draw 0) and fresh re-initialisations
of every parametrised layer of the trained counterpart (:func:`draw_seeds`; the zoo's
``<model>~reinit<seed>``), each explained on the same inputs for the same targets. Each (draw,
input) pair gives one rank similarity; the score is their mean, with the crossed t
interval (:func:`cfcheck.metrics.stats.crossed_interval`) over draws and inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from cfcheck.core.seeds import RANDOM_DRAWS, seeded
from cfcheck.metrics.sanity import SUPPORTS, rank_similarity, same_ranking

__all__ = ["DRAW_SEED_STRIDE", "draw_models", "draw_seeds", "similarity_table"]

#: the re-initialisation seeds of task seed s are s·DRAW_SEED_STRIDE + 1, + 2, …: disjoint across
#: task seeds (for fewer draws than the stride), and never the cascade's seed 0
DRAW_SEED_STRIDE = RANDOM_DRAWS.stride


def draw_seeds(seed: int, draws: int) -> tuple[int, ...]:
    """The re-initialisation seeds of task seed ``seed``'s draws 1 … ``draws`` − 1 (draw 0 is the
    domain's random classifier).

    Args:
        seed: the task's seed, int ≥ 0.
        draws: random networks per task, 1 ≤ draws < :data:`DRAW_SEED_STRIDE`.

    Returns:
        ``draws − 1`` distinct seeds.

    Example:
        >>> draw_seeds(0, 3), draw_seeds(1, 2)
        ((1, 2), (10008,))
    """
    for name, value, low in (("seed", seed, 0), ("draws", draws, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"`{name}` must be an int >= {low}, got {value!r}")
    if draws >= DRAW_SEED_STRIDE:
        raise ValueError(f"`draws` must be below {DRAW_SEED_STRIDE}, got {draws}")
    return tuple(seeded(seed, RANDOM_DRAWS, k) for k in range(1, draws))


def draw_models(random_model: str, counterpart: str, seed: int, draws: int) -> tuple[str, ...]:
    """The zoo names of a task's ``draws`` random networks: ``random_model`` first, then the
    re-initialisations of ``counterpart`` (:func:`draw_seeds`).

    Example:
        >>> draw_models("random_net", "cnn", 0, 3)
        ('random_net', 'cnn~reinit1', 'cnn~reinit2')
    """
    from cfcheck.models.zoo import reinitialisation_name

    return (random_model, *(reinitialisation_name(counterpart, s) for s in draw_seeds(seed, draws)))


def similarity_table(trained: Tensor, randomised: Sequence[Tensor], support: str = "all") -> Tensor:
    """Rank similarity of |saliency| under the trained classifier and under each random network,
    per (draw, input): the table whose grand mean the randomisation similarity reports.

    A pair whose correlation is undefined (a map constant on the elements compared) scores 1
    where both maps rank the elements identically (:func:`~cfcheck.metrics.sanity.same_ranking`)
    and 0 otherwise.

    Args:
        trained: N×… saliency maps of the trained classifier.
        randomised: R ≥ 1 maps of the same shape, one per random network, same inputs in the same
            order.
        support: ``"all"`` or ``"nonzero"``, as in :func:`~cfcheck.metrics.sanity.rank_similarity`.

    Returns:
        float32 R×N, in [−1, 1].

    Example:
        >>> trained = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
        >>> similarity_table(trained, [torch.tensor([[3.0, 2.0, 1.0], [0.0, 0.0, 0.0]]), trained])
        tensor([[-1.,  1.],
                [ 1.,  1.]])
    """
    if isinstance(randomised, Tensor) or not isinstance(randomised, Sequence) or not randomised:
        raise ValueError(f"`randomised` must be a non-empty sequence of saliency maps, got {type(randomised).__name__}")
    if support not in SUPPORTS:
        raise ValueError(f"`support` must be one of {SUPPORTS}, got {support!r}")
    rows = []
    for maps in randomised:
        similarity = rank_similarity(trained, maps, support=support)
        undefined = same_ranking(trained, maps).to(torch.float32)
        rows.append(torch.where(torch.isnan(similarity), undefined, similarity))
    return torch.stack(rows)
