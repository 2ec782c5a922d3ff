"""``scm_colour``, an RGB attribute domain the project renders itself (:mod:`tests.own_domains.scm_colour`):
a shape of four values → size → hue, and shape → hue, declared with no mechanism of the user's, so
cfcheck fits both (a linear location and a spline flow of the residual each).

Checked against the closed-form SCM the domain was drawn from: the domain's propagation (its fitted
mechanisms) carries do(shape) to hue *through* size, and do(size) to hue; the closed-form readers
read every image's attributes; the right-by-construction renderer re-draws every image exactly under
a null intervention and draws what the domain propagates under a real one. The end-to-end runs
(uncalibrated, calibrated) are ``tests/plugin/test_scm_user_domain_run.py`` and
``tests/kinds/test_scm_domain_calibration.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cfcheck.domains.attributes_mechanisms import to_fit
from tests.own_domains import scm_colour
from tests.own_domains.scm_colour_methods import ColourRenderer
from tests.own_domains.scm_colour_nets import ShapeReader, SizeHueReader

pytestmark = pytest.mark.usefixtures("single_torch_thread")

SPLITS = ("scored", "reference")


@pytest.fixture(scope="module")
def colour(single_torch_thread):
    return scm_colour.load(scm_colour.build())


def _intervened(domain, split: str, factor: str) -> tuple[dict, dict, dict]:
    """(observed, propagated by the domain, closed form) attributes of every image of ``split`` under a
    seeded do() of ``factor``, as float64 / int64 arrays."""
    index = torch.arange(len(domain.split(split)))
    parents = domain.parents(split, index)
    new = domain.sample_intervention(factor, parents, torch.Generator().manual_seed(0))
    propagated = domain.counterfactual_parents(split, index, {factor: new})
    observed = {name: value.numpy().astype(np.float64) for name, value in parents.items()}
    closed = scm_colour.closed_form_counterfactual(observed, {factor: new.numpy()})
    return observed, {name: value.numpy().astype(np.float64) for name, value in propagated.items()}, closed


def test_the_domain_declares_no_mechanism_so_cfcheck_fits_size_and_hue(colour):
    assert colour.attributes.mechanisms == {}
    assert to_fit(colour.attributes) == ("size", "hue")
    assert colour.categorical_factors == ("shape",) and colour.num_classes == 4
    assert colour.attribute_problems() == []  # the fitted mechanisms give the table back


@pytest.mark.parametrize("split", SPLITS)
def test_under_do_shape_the_propagated_hue_moves_through_size(colour, split):
    """The part of do(shape)'s effect on hue that goes through size, the propagated hue less the hue
    propagated with size held at its observed value (do(shape, size)): 0.06 per step of the shape's
    code in the closed form. Measured on the fitted mechanisms: size within 0.39 px of the closed form
    (0.27 sd; median 0.06 px), hue within 0.026, the part through size within 0.026 of 0.06 per step
    and within 0.006 of 0.06 × the propagated size's move."""
    observed, propagated, closed = _intervened(colour, split, "shape")
    index = torch.arange(len(colour.split(split)))
    held = {"shape": torch.from_numpy(closed["shape"]), "size": torch.from_numpy(observed["size"]).float()}
    direct = colour.counterfactual_parents(split, index, held)["hue"].numpy().astype(np.float64)
    step = closed["shape"] - observed["shape"]
    assert (step != 0).all() and np.array_equal(propagated["shape"], closed["shape"])
    assert np.abs(propagated["size"] - closed["size"]).max() < 0.5  # a third of size's sd (1.49)
    assert np.median(np.abs(propagated["size"] - closed["size"])) < 0.1
    assert np.abs(propagated["hue"] - closed["hue"]).max() < 0.03
    through_size = propagated["hue"] - direct
    assert np.abs(through_size - scm_colour.HUE_PER_SIZE * step).max() < 0.03  # the closed form's 0.06 per step
    assert np.abs(through_size - scm_colour.HUE_PER_SIZE * (propagated["size"] - observed["size"])).max() < 0.01
    assert np.abs(through_size).min() > 0.04


@pytest.mark.parametrize("split", SPLITS)
def test_do_size_moves_hue_and_do_hue_moves_nothing_else(colour, split):
    observed, propagated, closed = _intervened(colour, split, "size")
    assert np.array_equal(propagated["shape"], observed["shape"]) and np.array_equal(propagated["size"], closed["size"])
    assert np.abs(propagated["hue"] - closed["hue"]).max() < 0.01  # measured 0.0065; the mediated move is 0.06/px
    assert np.abs(closed["hue"] - observed["hue"]).mean() > 0.05
    observed, propagated, closed = _intervened(colour, split, "hue")
    for name in ("shape", "size"):
        assert np.array_equal(propagated[name], observed[name])
    assert np.array_equal(propagated["hue"], closed["hue"])


def test_the_readers_read_every_image_in_closed_form(colour):
    folder = scm_colour.build()
    images = torch.from_numpy(np.load(folder / "images.npy")).float() / 255
    table = np.load(folder / "attributes.npz")
    shape = np.array([scm_colour.SHAPE_NAMES.index(name) for name in table["shape"]])
    assert np.bincount(shape, minlength=4).min() > 400  # four values, about 500 images each
    with torch.no_grad():
        read_shape, read = ShapeReader()(images).argmax(1).numpy(), SizeHueReader()(images)
    assert np.array_equal(read_shape, shape)
    assert np.abs(read["size"].numpy() - table["size"]).max() < 0.15  # px; measured 0.12 (4× supersampling)
    assert np.abs(read["hue"].numpy() - table["hue"]).max() < 1e-3  # the colour is quantised to 1/255


def test_the_renderer_redraws_each_image_and_draws_what_the_domain_propagates(colour):
    renderer = ColourRenderer(colour)
    index = torch.arange(60)
    x = colour.split("scored").images[index]
    parents = colour.parents("scored", index)
    for factor in colour.factor_names:  # the null intervention: the observed value
        assert torch.equal(renderer.counterfactual(x, parents, {factor: parents[factor]}), x), factor
    new = colour.sample_intervention("shape", parents, torch.Generator().manual_seed(1))
    drawn = renderer.counterfactual(x, parents, {"shape": new})
    target = colour.counterfactual_parents("scored", index, {"shape": new})
    with torch.no_grad():
        assert torch.equal(ShapeReader()(drawn).argmax(1), target["shape"])
        read = SizeHueReader()(drawn)
    assert float((read["size"] - target["size"]).abs().max()) < 0.15
    assert float((read["hue"] - target["hue"]).abs().max()) < 1e-3
    assert float((drawn[:, :, 0, 0] - x[:, :, 0, 0]).abs().max()) == 0.0  # the input's own background
    with pytest.raises(ValueError, match="not images of the scm_colour domain"):
        renderer.counterfactual(torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)), {}, {})
