"""What the SCM real-image calibration controls pick (:class:`cfcheck.kinds.scm.calibration_controls.RealImagePicker`),
on a hand-made attribute domain whose pool is laid out so that every answer is known by construction.

The domain has two continuous attributes ``a`` and ``b`` (a value's bin is its integer part) and a
categorical ``k``; interventions set their attribute and move nothing else. Each pool image is a
constant image whose grey level names it, so a pick is read back from its pixels.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from cfcheck.kinds.scm.calibration_controls import RealImagePicker

#: pool row → (a, b, k): no row has the cell (3, 0, 0); P2 is one bin off in ``a`` only, P3 and P4
#: are in ``a``'s bin 3 but two bins off in ``b``, P5 in ``a``'s bin 3 and ``b``'s bin 0 but of
#: another ``k``, P1 in ``a``'s bin 3 and off in ``b`` and ``k``
POOL = {
    "P0": (1.5, 0.5, 0),
    "P1": (3.5, 3.5, 1),
    "P2": (2.5, 0.5, 0),
    "P3": (3.2, 2.5, 0),
    "P4": (3.7, 2.2, 0),
    "P5": (3.9, 0.5, 1),
}
LEVEL = {name: 0.1 * (i + 1) for i, name in enumerate(POOL)}  # P4 (0.5) is nearer the inputs (0.9) than P3
SCORED = [(0.5, 0.5, 0), (0.2, 0.5, 0)]


class _Split(SimpleNamespace):
    def __len__(self) -> int:
        return len(self.images)


class Domain:
    """The least an attribute domain offers the picker."""

    name = "handmade"
    factor_names = ("a", "b", "k")
    categorical_factors = ("k",)
    split_roles = {"train": "train", "scored": "scored"}

    def __init__(self) -> None:
        self.rows = {"train": list(POOL.values()), "scored": SCORED}
        levels = {"train": [LEVEL[n] for n in POOL], "scored": [0.9, 0.95]}
        self.images = {
            name: torch.tensor(v).float()[:, None, None, None].expand(-1, 1, 2, 2) for name, v in levels.items()
        }

    def split(self, name: str, n: int | None = None) -> _Split:
        return _Split(images=self.images[name][:n])

    def parents(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        rows = torch.tensor(self.rows[split], dtype=torch.float64)[index]
        return {name: rows[:, i] for i, name in enumerate(self.factor_names)}

    def parent_bin(self, name: str, values: torch.Tensor) -> torch.Tensor:
        return values.floor().long()

    def counterfactual_parents(self, split: str, index: torch.Tensor, action: dict) -> dict[str, torch.Tensor]:
        return {**self.parents(split, index), **{k: v.double() for k, v in action.items()}}


def _picker() -> RealImagePicker:
    return RealImagePicker(Domain())


def _named(images: torch.Tensor) -> list[str]:
    by_level = {round(level, 4): name for name, level in LEVEL.items()}
    return [by_level[round(float(image.flatten()[0]), 4)] for image in images]


def _inputs(picker: RealImagePicker) -> torch.Tensor:
    return picker.domain.images["scored"]


def test_the_intervened_attribute_comes_first_where_the_exact_cell_is_empty():
    picker = _picker()
    x = _inputs(picker)[:1]
    do_a3 = {"a": torch.tensor([3.4])}  # the target cell (3, 0, 0): no pool image holds it
    # by the sum of bin distances P2 (one bin off in a) would win; lexicographically a's bin decides,
    # then the discrete k (P5 differs in it only, P1 in it and b), then b: P3 and P4, b two bins off
    assert _named(picker.nearest(x, do_a3)) == ["P4"]  # the nearer in pixels of P3 and P4
    drawn = {_named(picker.random(x, do_a3, torch.Generator().manual_seed(s)))[0] for s in range(40)}
    assert drawn == {"P3", "P4"}
    assert picker.found["picks"] == 41 and picker.found["intervened_cell"] == 41 and picker.found["exact_cell"] == 0


def test_where_no_pool_image_has_the_intervened_bin_the_nearest_bin_of_it_wins():
    picker = _picker()
    do_a4 = {"a": torch.tensor([4.5])}  # bin 4: nobody; bin 3 (P1, P3, P4) is nearest, then b decides
    drawn = {_named(picker.random(_inputs(picker)[:1], do_a4, torch.Generator().manual_seed(s)))[0] for s in range(40)}
    assert drawn == {"P3", "P4"}
    assert picker.found["intervened_cell"] == 0


def test_the_exact_cell_wins_where_the_pool_holds_it_and_is_counted():
    picker = _picker()
    x = _inputs(picker)
    do_a = {"a": torch.tensor([1.1, 3.0])}  # row 0 → (1, 0, 0): P0 exactly; row 1 → (3, 0, 0): empty
    assert _named(picker.nearest(x, do_a)) == ["P0", "P4"]
    assert picker.found == {"picks": 2, "exact_cell": 1, "intervened_cell": 2}


def test_a_discrete_intervened_attribute_is_matched_first_too():
    picker = _picker()
    do_k1 = {"k": torch.tensor([1])}  # target (0, 0, 1): P1 and P5 have k = 1; P5 is 3 bins away, P1 6
    assert _named(picker.nearest(_inputs(picker)[:1], do_k1)) == ["P5"]


def test_any_real_ignores_the_intervention():
    picker = _picker()
    x = _inputs(picker)[[0] * 200]
    images = picker.any(x, torch.Generator().manual_seed(0))
    assert set(_named(images)) == set(POOL)  # every pool image, whatever the cell: 200 draws of 6
    assert images.shape == x.shape and picker.found["picks"] == 0


def test_an_input_of_neither_split_is_refused_by_name():
    picker = _picker()
    with pytest.raises(ValueError, match=r"1 of 1 inputs are not images of domain 'handmade'"):
        picker.nearest(torch.full((1, 1, 2, 2), 0.77), {"a": torch.tensor([1.0])})
