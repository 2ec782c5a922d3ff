"""SCM generators of the test's own making for the ``scm_colour`` domain (:mod:`tests.own_domains.scm_colour`).

Its mechanisms are the ones cfcheck fits to the attribute table, so what a right counterfactual shows
is the domain's own propagation (``counterfactual_parents``), which the suites compare against; these
generators take it from the domain rather than from the closed-form SCM:

* :class:`ColourRenderer` — right by construction: the input's own exogenous style (centre and
  background) re-rendered with the attributes the domain propagates;
* a random real image with the target attributes is
  :class:`tests.own_domains.scm_methods.RandomReal` over :class:`DomainRows`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.kinds.scm.methods.contract import SCMGenerator

from .scm_colour import FRACTIONS, render
from .scm_methods import _as_image, _DomainData, _key


class DomainRows(_DomainData):
    """A materialised test domain's images, styles and attributes, found by image; the attributes after
    an intervention as the domain propagates them (``rows`` is the ``scm_shapes`` lookup's).

    Args:
        domain: the domain (an ``ImageDomain`` over the folder's ``images.npy``, with ``styles.npy``).
    """

    def __init__(self, domain: Any) -> None:  # not _DomainData's: the table is the domain's parents
        root = Path(domain.root)
        self.domain = domain
        self.images = np.load(root / "images.npy")
        self.styles = np.load(root / "styles.npy")
        self._index = {_key(image): row for row, image in enumerate(self.images)}
        #: each image's split and its position there (the domain answers by split and position)
        self.places: dict[int, tuple[str, int]] = {}
        columns: dict[str, list[torch.Tensor]] = {name: [] for name in domain.factor_names}
        rows = []
        for role in FRACTIONS:
            split = domain.split(role)
            self.places.update({row: (role, at) for at, row in enumerate(split.index.tolist())})
            parents = domain.parents(role, torch.arange(len(split)))
            rows.append(split.index)
            for name in columns:
                columns[name].append(parents[name])
        order = torch.cat(rows).argsort()
        #: attribute -> its value for every image, in the images' order (int64 codes, float32 values)
        self.table = {name: torch.cat(parts)[order].numpy() for name, parts in columns.items()}

    def propagated(self, rows: np.ndarray, intervention: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
        """The rows' attributes after ``intervention``, by the domain's ``counterfactual_parents``."""
        new = {name: column[rows].copy() for name, column in self.table.items()}
        places = [self.places[int(row)] for row in rows]
        for role in {role for role, _ in places}:
            chosen = np.array([i for i, (where, _) in enumerate(places) if where == role])
            at = torch.tensor([places[i][1] for i in chosen])
            given = {name: value.detach().cpu()[torch.from_numpy(chosen)] for name, value in intervention.items()}
            for name, value in self.domain.counterfactual_parents(role, at, given).items():
                new[name][chosen] = value.numpy()
        return new


class ColourRenderer(SCMGenerator):
    """The true counterfactual of the domain's propagation: the input's style, the propagated attributes."""

    def __init__(self, domain: Any) -> None:
        self.data = DomainRows(domain)

    def counterfactuals(
        self, x: torch.Tensor, parents: dict, intervention: dict, generator: torch.Generator
    ) -> torch.Tensor:
        rows = self.data.rows(x)
        new = self.data.propagated(rows, intervention)
        pixels = render(
            new["shape"], new["size"].astype(np.float64), new["hue"].astype(np.float64), self.data.styles[rows]
        )
        return _as_image(pixels, x)
