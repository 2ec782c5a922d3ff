"""Example grids: PNGs whose pixels are known by construction, and their index."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from cfcheck.reporting.examples import clear_examples, load_example_grids, write_example_grid


def _pixels(run_dir, relative):
    return np.asarray(Image.open(run_dir / relative))


def test_a_grid_round_trips_and_draws_what_it_was_given(tmp_path):
    x = torch.zeros(2, 1, 4, 4)
    x[0, 0, 0, 0] = 1.0
    difference = torch.zeros(2, 1, 4, 4)
    difference[0, 0, 0, 0], difference[0, 0, 1, 1] = 0.5, -0.25
    saliency = torch.zeros(2, 1, 4, 4)
    saliency[1, 0, 3, 3] = -7.0
    grid = write_example_grid(tmp_path, "vce", "morpho", "cnn/ideal/seed0", {"input": x, "difference": difference, "saliency": saliency})
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
