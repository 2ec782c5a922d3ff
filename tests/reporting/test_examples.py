"""Example grids: PNGs whose pixels are known by construction, and their index."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from cfcheck.reporting.examples import (
    STRIP_CELL,
    STRIP_HEIGHT,
    ExampleGrid,
    clear_examples,
    examples_heading,
    load_example_grids,
    write_example_grid,
)


def _pixels(run_dir, relative):
    return np.asarray(Image.open(run_dir / relative))


def test_a_grid_round_trips_and_draws_what_it_was_given(tmp_path):
    x = torch.zeros(2, 1, 4, 4)
    x[0, 0, 0, 0] = 1.0
    difference = torch.zeros(2, 1, 4, 4)
    difference[0, 0, 0, 0], difference[0, 0, 1, 1] = 0.5, -0.25
    saliency = torch.zeros(2, 1, 4, 4)
    saliency[1, 0, 3, 3] = -7.0
    grid = write_example_grid(
        tmp_path, "vce", "morpho", "cnn/ideal/seed0", {"input": x, "difference": difference, "saliency": saliency}
    )
    (loaded,) = load_example_grids(tmp_path)
    assert loaded == grid and loaded.columns == ("input", "difference", "saliency") and len(loaded.rows) == 2
    image = _pixels(tmp_path, grid.rows[0]["input"])
    assert image[0, 0] == 255 and image[1, 1] == 0
    diff = _pixels(tmp_path, grid.rows[0]["difference"])
    assert tuple(diff[0, 0]) == (255, 0, 0)  # the largest increase: full red
    assert tuple(diff[1, 1]) == (128, 128, 255)  # half as large a decrease: half blue
    assert tuple(diff[2, 2]) == (255, 255, 255)  # unchanged: white
    sal = _pixels(tmp_path, grid.rows[1]["saliency"])
    assert sal[3, 3] == 255 and sal[0, 0] == 0  # |saliency| scaled to its maximum


def test_grids_are_cleared_between_runs_and_bad_input_is_named(tmp_path):
    write_example_grid(tmp_path, "scm", "morpho", "do_digit/seed0", {"input": torch.rand(1, 1, 4, 4)})
    clear_examples(tmp_path)
    assert load_example_grids(tmp_path) == []
    with pytest.raises(ValueError, match="same number of rows"):
        write_example_grid(tmp_path, "vce", "morpho", "t", {"a": torch.rand(1, 1, 4, 4), "b": torch.rand(2, 1, 4, 4)})


def test_a_vector_is_drawn_as_a_heat_strip_one_cell_per_coordinate(tmp_path):
    # a domain without a pixel grid (64-d points): the grid draws each coordinate as a cell
    x = torch.zeros(1, 64)
    x[0, 0], x[0, 1] = 2.0, -1.0
    saliency = torch.zeros(1, 64)
    saliency[0, 63] = -3.0
    grid = write_example_grid(
        tmp_path, "attribution", "toy", "mlp/seed0", {"input": x, "saliency": saliency}, shows="saliency maps"
    )
    strip = _pixels(tmp_path, grid.rows[0]["input"])
    assert strip.shape == (STRIP_HEIGHT, 64 * STRIP_CELL, 3)
    assert tuple(strip[0, 0]) == (255, 0, 0)  # the largest positive coordinate: full red
    assert tuple(strip[-1, STRIP_CELL]) == (128, 128, 255)  # half as large, negative: half blue
    assert tuple(strip[0, 2 * STRIP_CELL]) == (255, 255, 255)  # zero: white
    sal = _pixels(tmp_path, grid.rows[0]["saliency"])
    assert sal.shape == (STRIP_HEIGHT, 64 * STRIP_CELL) and sal[0, -1] == 255 and sal[0, 0] == 0
    (loaded,) = load_example_grids(tmp_path)
    assert loaded.shows == "saliency maps"


def test_the_examples_heading_names_what_the_grids_show():
    def grid(shows):
        return ExampleGrid("k", "d", "t", ("input",), (), shows)

    assert examples_heading([grid("counterfactuals")]) == "Example counterfactuals"
    assert examples_heading([grid("saliency maps"), grid("saliency maps")]) == "Example saliency maps"
    assert (
        examples_heading([grid("counterfactuals"), grid("saliency maps"), grid("latent counterfactuals")])
        == "Example counterfactuals, saliency maps and latent counterfactuals"
    )
