"""SCM generators of the test's own making for the ``scm_shapes`` domain (:mod:`tests.own_domains.scm_shapes`),
whose behaviour on the SCM suites is known by construction. A bundled generator cannot run there
(they are trained on the bundled SCM domain), so these stand in:

* :class:`ShapeRenderer` — right by construction: abduction looks the input up in the domain's data
  (its row, hence its position and every attribute), the intervention propagates through the
  closed-form mechanism (size → brightness), and the domain's renderer draws the result;
* :class:`RandomReal` — a random real image of the ``train`` split whose attributes fall in the
  bins of the counterfactual's (effective and realistic, not a counterfactual of this input);
* :class:`Scramble` — renders a shape with every attribute and its position drawn afresh
  (realistic, but it changes everything, the attributes the intervention should keep too).

Identity and noise are cfcheck's own (``cfcheck.fixtures.scm.identity`` / ``.noise``). Each of these
is an adapter's ``cf_method`` (``tests/own_domains/scm_adapters/<name>.py``); none calls the domain's
answer (``counterfactual_parents``): each propagates the intervention itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.kinds.scm.methods.contract import SCMGenerator, StochasticSCMGenerator

from .scm_shapes import CENTRE_JITTER, SIZE, SIZE_RANGE, TYPES, brightness_noise, brightness_of, render


def _key(image: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).digest()


def _uint8(x: torch.Tensor) -> np.ndarray:
    return torch.round(x.detach().float().cpu() * 255.0).clamp_(0, 255).to(torch.uint8).numpy()


def _as_image(pixels: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(pixels).float().div_(255.0).to(device=like.device, dtype=like.dtype)


class _DomainData:
    """The domain's arrays: images, styles and the attribute table (float64), read from its folder."""

    def __init__(self, domain: Any) -> None:
        root = Path(domain.root)
        self.domain = domain
        self.images = np.load(root / "images.npy")
        self.styles = np.load(root / "styles.npy")
        table = np.load(root / "attributes.npz")
        self.table = {
            "type": np.searchsorted(np.array(TYPES), table["type"]).astype(np.int64),
            "size": table["size"].astype(np.float64),
            "brightness": table["brightness"].astype(np.float64),
        }
        self._index = {_key(image): row for row, image in enumerate(self.images)}

    def rows(self, x: torch.Tensor) -> np.ndarray:
        keys = [_key(image) for image in _uint8(x)]
        missing = sum(key not in self._index for key in keys)
        if missing:
            raise ValueError(f"{missing} of {len(keys)} inputs are not images of the {self.domain.name} domain")
        return np.array([self._index[key] for key in keys], dtype=np.int64)

    def propagated(self, rows: np.ndarray, intervention: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
        """The rows' attributes after ``intervention``: set, then brightness predicted from its
        abducted noise where size changed and brightness was not set (the domain's mechanism)."""
        observed = {name: column[rows] for name, column in self.table.items()}
        new = dict(observed)
        for name, given in intervention.items():
            value = given.detach().cpu().double().numpy()
            as_handed = observed[name].astype(np.float32).astype(np.float64)  # the parents arrive as float32
            new[name] = np.where(value == as_handed, observed[name], value)  # a null do() keeps the exact value
        new["type"] = new["type"].astype(np.int64)
        if "brightness" not in intervention and "size" in intervention:
            noise = brightness_noise(observed["brightness"], observed["size"])
            moved = new["size"] != observed["size"]
            new["brightness"] = np.where(moved, brightness_of(new["size"], noise), observed["brightness"])
        return new


class ShapeRenderer(SCMGenerator):
    """The true counterfactual: the input's own position re-rendered with the propagated attributes."""

    def __init__(self, domain: Any) -> None:
        self.data = _DomainData(domain)

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        rows = self.data.rows(x)
        new = self.data.propagated(rows, intervention)
        return _as_image(render(new["type"], new["size"], new["brightness"], self.data.styles[rows]), x)


class RandomReal(StochasticSCMGenerator):
    """A random ``train`` image in the counterfactual's cell (every attribute's bin; the nearest cell
    where the split holds none). ``data`` finds the inputs and propagates the intervention (by default
    this domain's closed form; :class:`tests.own_domains.scm_colour_methods.DomainRows`: the domain's own)."""

    def __init__(self, domain: Any, data: Any = None) -> None:
        self.data = _DomainData(domain) if data is None else data
        self.domain = domain
        train = domain.split("train")
        self.train_rows = train.index.numpy()
        self.cells = self._cells({name: column[self.train_rows] for name, column in self.data.table.items()})

    def _cells(self, values: dict[str, np.ndarray]) -> torch.Tensor:
        return torch.stack(
            [self.domain.parent_bin(name, torch.as_tensor(values[name])) for name in self.domain.factor_names], 1
        )

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        wanted = self._cells(self.data.propagated(self.data.rows(x), intervention))
        apart = (wanted[:, None, :] - self.cells[None]).abs().sum(2).double()
        apart += torch.rand(apart.shape, generator=generator, device=generator.device).cpu().double() * 0.5
        chosen = self.train_rows[apart.argmin(1).numpy()]
        return _as_image(self.data.images[chosen], x)


class Scramble(StochasticSCMGenerator):
    """A fresh shape: type, size, brightness (from the mechanism's noise) and position all drawn anew."""

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        draw = torch.rand(5, len(x), generator=generator, device=generator.device).cpu().double().numpy()
        kinds = np.minimum((draw[0] * len(TYPES)).astype(np.int64), len(TYPES) - 1)
        size = SIZE_RANGE[0] + (SIZE_RANGE[1] - SIZE_RANGE[0]) * draw[1]
        brightness = brightness_of(size, 4 * draw[2] - 2)
        centres = SIZE / 2 + CENTRE_JITTER * (2 * draw[3:].T - 1)
        return _as_image(render(kinds, size, brightness, centres), x)
