"""The random draws of the attribution randomisation similarity: their seeds and zoo names, the
zoo's re-initialised models, and the (draw, input) similarity table."""

from __future__ import annotations

import pytest
import torch

from cfcheck.domains import get_domain
from cfcheck.kinds.attribution.randomisation import draw_models, draw_seeds, similarity_table
from cfcheck.metrics.sanity import rank_similarity
from cfcheck.models.classifiers.randomisation import reinitialised
from cfcheck.models.zoo import CASCADE_CALIBRATION_IMAGES, ModelZoo, reinitialisation_name


def test_draw_seeds_are_disjoint_across_task_seeds_and_avoid_the_cascades():
    seeds = [s for task_seed in range(4) for s in draw_seeds(task_seed, 10)]
    assert len(set(seeds)) == len(seeds) == 36 and 0 not in seeds
    assert draw_seeds(2, 1) == ()
    assert draw_models("random_net", "cnn", 1, 3) == ("random_net", "cnn~reinit10008", "cnn~reinit10009")


@pytest.mark.parametrize(
    ("seed", "draws", "match"),
    [(-1, 3, "`seed` must be an int >= 0"), (0, 0, "`draws`"), (0, True, "`draws`"), (0, 10_007, "below 10007")],
)
def test_draw_seed_arguments(seed, draws, match):
    with pytest.raises(ValueError, match=match):
        draw_seeds(seed, draws)


@pytest.mark.parametrize(("model", "seed"), [("cnn~features.0", 1), ("", 1), ("cnn", -1), ("cnn", 1.0)])
def test_reinitialisation_name_arguments(model, seed):
    with pytest.raises(ValueError):
        reinitialisation_name(model, seed)


def test_the_zoo_builds_a_named_draw_as_the_full_reinitialisation_of_its_model():
    domain = get_domain("morpho")
    zoo = ModelZoo(domain, "cpu")
    draw = zoo[reinitialisation_name("cnn", 3)]
    calibration = domain.split(domain.split_roles["train"], n=CASCADE_CALIBRATION_IMAGES).images
    expected = reinitialised(zoo["cnn"], calibration, seed=3).state_dict()
    assert draw.state_dict().keys() == expected.keys()
    assert all(torch.equal(draw.state_dict()[k], v) for k, v in expected.items())
    assert zoo["cnn~reinit3"] is draw  # built once per session
    assert not torch.equal(
        zoo["cnn~reinit4"].state_dict()["network.features.0.weight"], expected["network.features.0.weight"]
    )
    with pytest.raises(KeyError, match="no randomisation stage"):
        zoo["cnn~reinitialise"]


def test_the_similarity_table_has_one_row_per_draw_and_scores_undefined_pairs_by_their_ranking():
    generator = torch.Generator().manual_seed(0)
    trained = torch.randn(6, 1, 4, 4, generator=generator)
    trained[0] = 0.0  # a constant map: undefined against anything
    draws = [torch.randn(6, 1, 4, 4, generator=generator) for _ in range(3)]
    draws[1][0] = 0.0  # ranks like the trained map's (all tied): 1
    for support in ("all", "nonzero"):
        table = similarity_table(trained, draws, support=support)
        assert table.shape == (3, 6) and table.dtype == torch.float32
        for row, maps in zip(table, draws):
            torch.testing.assert_close(row[1:], rank_similarity(trained[1:], maps[1:], support=support))
        assert table[:, 0].tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("randomised", "support", "match"),
    [
        ([], "all", "non-empty sequence"),
        (torch.zeros(2, 3, 1), "all", "non-empty sequence"),
        ([torch.zeros(3, 1)], "some", "`support`"),
    ],
)
def test_similarity_table_arguments(randomised, support, match):
    with pytest.raises(ValueError, match=match):
        similarity_table(torch.zeros(3, 1), randomised, support=support)
