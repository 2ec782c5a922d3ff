"""scikit-learn's digits as an attribute-labelled domain (a structural causal model), written only
against cfcheck's public API.

``make_domain`` is what ``--domain digits_scm_example.domain:make_domain`` names. Each of the 1,797
8×8 images (grey levels 0–16, scaled to [0, 1]) gets three attributes, measured from its pixels as
Morpho-MNIST measures MNIST:

* ``digit`` — categorical, the label (a root);
* ``width`` — continuous, the horizontal spread of the ink in pixels: twice the standard deviation
  of the column coordinate, weighted by intensity (an image moment);
* ``ink`` — continuous, the stroke mass: the mean intensity of the 64 pixels.

The causal graph is an assumption about how the digits were drawn: the writer picks a digit, then
how wide to draw it (``digit → width``), and the ink laid down follows from the digit's shape and
its width (``digit → ink``, ``width → ink``). Its mechanisms are the example's own, additive-noise
equations fitted in closed form to the whole table (:func:`fit_mechanisms`):
``width = a[digit] + u`` and ``ink = b[digit] + c·width + u``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.domains.attributes import Attributes, Mechanism, categorical, continuous
from cfcheck.domains.data import ArraySource, ImageDomain

#: the example's folder: its model store (models/) and calibrated bars (bars-<profile>.json)
ROOT = Path(__file__).resolve().parent.parent
NAME = "sklearn_digits_scm"
DIGITS = tuple(str(d) for d in range(10))
#: the generator learns from "train"; the predictors, the embedding and the minimality VAE from
#: "oracle_train"; realism matches each counterfactual with 7 or more real images of "reference"
FRACTIONS = {"train": 0.25, "oracle_train": 0.15, "selection": 0.02, "scored": 0.08, "reference": 0.5}
MODEL_ROLES = {
    "anticausal_predictors": ("predictor_digit", "predictor_measures"),
    "embedding": ("embedding",),
    "minimality_vae": ("vae",),
}


def measure(images: np.ndarray) -> dict[str, np.ndarray]:
    """``width`` and ``ink`` (float64) of N×1×8×8 images in [0, 1]."""
    grey = np.asarray(images, dtype=np.float64).reshape(len(images), 8, 8)
    mass = grey.sum(axis=(1, 2)).clip(1e-6)
    columns = np.arange(8, dtype=np.float64)
    column_mass = grey.sum(axis=1) / mass[:, None]
    centre = (column_mass * columns).sum(1)
    spread = (column_mass * (columns[None] - centre[:, None]) ** 2).sum(1)
    return {"width": 2.0 * np.sqrt(spread), "ink": grey.mean(axis=(1, 2))}


@lru_cache(maxsize=1)
def load() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The images (float32 N×1×8×8) and the attribute table (digit int64, width and ink float64)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    return images, {"digit": digits.target.astype(np.int64), **measure(images)}


def fit_mechanisms(table: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, float]]:
    """Least-squares coefficients: width's mean per digit; ink's intercept per digit and slope in width."""
    digit = np.asarray(table["digit"])
    width_means = np.array([table["width"][digit == d].mean() for d in range(10)])
    design = np.concatenate([np.eye(10)[digit], np.asarray(table["width"])[:, None]], 1)
    solution = np.linalg.lstsq(design, np.asarray(table["ink"]), rcond=None)[0]
    return {"width": (width_means, 0.0), "ink": (solution[:10], float(solution[10]))}


def _location(name: str, parents: Mapping[str, torch.Tensor]) -> np.ndarray:
    intercepts, slope = fit_mechanisms(load()[1])[name]
    digit = torch.as_tensor(parents["digit"]).long().numpy()
    location = intercepts[digit]
    if slope:
        location = location + slope * torch.as_tensor(parents["width"]).double().numpy()
    return location


def _mechanism(name: str) -> Mechanism:
    def abduct(values: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return torch.as_tensor(values).double() - torch.from_numpy(_location(name, parents))

    def predict(noise: Any, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return torch.from_numpy(_location(name, parents)) + torch.as_tensor(noise).double()

    return Mechanism(abduct=abduct, predict=predict)


#: the example's attribute mechanisms (additive noise; abduction is exact)
MECHANISMS = {"width": _mechanism("width"), "ink": _mechanism("ink")}
GRAPH = {"width": ("digit",), "ink": ("digit", "width")}


def propagate(parents: Mapping[str, torch.Tensor], intervention: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every attribute after ``intervention``: set, then each descendant predicted from its abducted
    noise under the new parents (width before ink); an attribute whose parents keep their values keeps its own."""
    new = {name: torch.as_tensor(value).clone() for name, value in parents.items()}
    new.update({name: torch.as_tensor(value).clone() for name, value in intervention.items()})
    for name in ("width", "ink"):
        if name in intervention:
            continue
        moved = torch.zeros(len(new[name]), dtype=torch.bool)
        for parent in GRAPH[name]:
            moved |= new[parent].double() != torch.as_tensor(parents[parent]).double()
        if bool(moved.any()):
            noise = MECHANISMS[name].abduct(parents[name], parents)
            predicted = MECHANISMS[name].predict(noise, new).to(new[name].dtype)
            new[name] = torch.where(moved, predicted, new[name])
    return new


def make_domain() -> ImageDomain:
    images, table = load()
    attributes = Attributes(
        [categorical("digit", values=DIGITS), continuous("width", bins=5), continuous("ink", bins=5)],
        graph=GRAPH,
        table=table,
        mechanisms=MECHANISMS,
    )
    return ImageDomain(
        NAME,
        ArraySource(images, table["digit"], name="sklearn.datasets.load_digits"),
        root=ROOT,
        model_roles=MODEL_ROLES,
        class_names=DIGITS,
        seed=0,
        fractions=FRACTIONS,
        attributes=attributes,
    )
