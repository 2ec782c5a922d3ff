"""What the SCM calibration controls that return real images pick, on any domain that declares
attributes (``ImageDomain(..., attributes=...)``): for each input, the counterfactual's attributes
(the intervention propagated by the domain's mechanisms from the input's observed attributes), then
a real image of the domain's ``train`` split whose attributes fall in the same cell (every discrete
attribute equal, every continuous one in the same bin; the nearest cell where the split holds none).

- :meth:`RealImagePicker.random`: a random such image (effective and realistic, but not a
  counterfactual of *this* input: it must fail composition);
- :meth:`RealImagePicker.nearest`: the such image nearest the input in pixels (L2).

The adapters ``cfcheck.fixtures.scm.random_real`` and ``cfcheck.fixtures.scm.nearest_real`` wrap
them as SCM generators. Inputs are found by their exact pixels in the scored split, or in the pool
(a composition cycle feeds a control its own output back).
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

__all__ = ["POOL_LIMIT", "RealImagePicker"]

#: at most this many images of the training split are searched (its first ones)
POOL_LIMIT = 10_000


def _key(image: torch.Tensor) -> bytes:
    pixels = image.detach().cpu().float().contiguous().numpy().tobytes()
    return hashlib.blake2b(pixels, digest_size=16).digest()


class RealImagePicker:
    """Real images with a counterfactual's attributes, from a domain's training split.

    Args:
        domain: a domain that declares attributes (``parents``, ``counterfactual_parents``,
            ``parent_bin``, ``factor_names``, ``categorical_factors``, ``split_roles``).

    Raises:
        ValueError: where the domain declares no attributes or its training split is empty.
    """

    def __init__(self, domain: Any) -> None:
        if not getattr(domain, "factor_names", ()):
            raise ValueError(
                f"domain {getattr(domain, 'name', domain)!r} declares no attributes: the real-image SCM "
                "controls need ImageDomain(..., attributes=Attributes(...))"
            )
        self.domain = domain
        roles = getattr(domain, "split_roles", {})
        self.pool_split = roles.get("train", "train")
        scored = roles.get("scored", "scored")
        pool = domain.split(self.pool_split)
        pool = domain.split(self.pool_split, min(len(pool), POOL_LIMIT))
        if not len(pool):
            raise ValueError(f"domain {domain.name!r}: its {self.pool_split!r} split holds no image to pick from")
        self.pool = pool.images.float()
        rows = torch.arange(len(pool))
        self.pool_cells = self._cells(domain.parents(self.pool_split, rows))
        self._where: dict[bytes, tuple[str, int]] = {}
        for name, images in ((self.pool_split, self.pool), (scored, domain.split(scored).images)):
            self._where.update({_key(image): (name, i) for i, image in enumerate(images)})

    def _cells(self, attributes: dict[str, torch.Tensor]) -> torch.Tensor:
        """N × attributes: each attribute's bin (a discrete attribute's code)."""
        names = self.domain.factor_names
        return torch.stack([self.domain.parent_bin(name, attributes[name]).long() for name in names], 1)

    def target_cells(self, x: torch.Tensor, intervention: dict[str, torch.Tensor]) -> torch.Tensor:
        """The cell of each input's counterfactual attributes under ``intervention``.

        Raises:
            ValueError: naming how many inputs are images of neither the scored nor the pool split.
        """
        found = [self._where.get(_key(image)) for image in x]
        missing = sum(where is None for where in found)
        if missing:
            raise ValueError(
                f"{missing} of {len(x)} inputs are not images of domain {self.domain.name!r}'s scored or "
                f"{self.pool_split!r} split; the real-image controls look each input's attributes up"
            )
        cells = torch.empty(len(x), len(self.domain.factor_names), dtype=torch.long)
        action = {name: value.detach().cpu() for name, value in intervention.items()}
        for split in sorted({where[0] for where in found if where is not None}):
            rows = torch.tensor([i for i, where in enumerate(found) if where is not None and where[0] == split])
            index = torch.tensor([found[i][1] for i in rows.tolist()])  # type: ignore[index]
            new = self.domain.counterfactual_parents(split, index, {k: v[rows] for k, v in action.items()})
            cells[rows] = self._cells(new)
        return cells

    def _apart(self, wanted: torch.Tensor) -> torch.Tensor:
        """N × pool: how far each pool image's cell is from each wanted one (1 per discrete attribute
        that differs, the bin distance of each continuous one)."""
        discrete = torch.tensor([name in self.domain.categorical_factors for name in self.domain.factor_names])
        gap = (wanted[:, None, :] - self.pool_cells[None]).abs()
        return torch.where(discrete, (gap > 0).long(), gap).sum(2)

    def random(self, x: torch.Tensor, intervention: dict, generator: torch.Generator) -> torch.Tensor:
        """A random pool image in each counterfactual's cell (the nearest cell where none is)."""
        apart = self._apart(self.target_cells(x, intervention)).double()
        apart += torch.rand(apart.shape, generator=generator, device=generator.device).cpu().double() * 0.5
        return self.pool[apart.argmin(1)].to(device=x.device, dtype=x.dtype)

    def nearest(self, x: torch.Tensor, intervention: dict) -> torch.Tensor:
        """The pool image in each counterfactual's cell (the nearest cell where none is) nearest the input."""
        apart = self._apart(self.target_cells(x, intervention))
        closest = apart == apart.min(1, keepdim=True).values
        pixels = torch.cdist(x.detach().cpu().float().flatten(1), self.pool.flatten(1))
        pixels = torch.where(closest, pixels, torch.full_like(pixels, float("inf")))
        return self.pool[pixels.argmin(1)].to(device=x.device, dtype=x.dtype)
