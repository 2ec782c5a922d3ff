"""What the SCM calibration controls that return real images pick, on any domain that declares
attributes (``ImageDomain(..., attributes=...)``): for each input, the counterfactual's attributes
(the intervention propagated by the domain's mechanisms from the input's observed attributes), then
a real image of the domain's ``train`` split whose attributes fall in the same cell (every discrete
attribute equal, every continuous one in the same bin). Where the split holds none, the nearest cell
by a lexicographic distance: first the intervened attribute's (a pool image whose intervened
attribute is in the target's bin always beats one whose is not), then how many other discrete
attributes differ (the first one is the class realism is scored within), then the other continuous
attributes' bin distance.

- :meth:`RealImagePicker.random`: a random such image (effective and realistic, but not a
  counterfactual of *this* input: it must fail composition);
- :meth:`RealImagePicker.nearest`: the such image nearest the input in pixels (L2);
- :meth:`RealImagePicker.any`: a random image of the split, whatever its cell (realistic, but
  neither effective nor compliant with the causal graph).

The adapters ``cfcheck.fixtures.scm.random_real``, ``cfcheck.fixtures.scm.nearest_real`` and
``cfcheck.fixtures.scm.any_real`` wrap them as SCM generators. Inputs are found by their exact
pixels in the scored split, or in the pool (a composition cycle feeds a control its own output back).
:attr:`RealImagePicker.found` counts, over every pick by cell, how often the exact cell and the
intervened attribute's cell held an image.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

__all__ = ["POOL_LIMIT", "RealImagePicker", "code_version"]

#: at most this many images of the training split are searched (its first ones)
POOL_LIMIT = 10_000


def code_version(adapter: str) -> str:
    """A ``cfcheck_version`` for an adapter built on this module: the digest of this module's source
    and the adapter file's, so that the generation cache (which fingerprints the adapter and its
    method's base classes, not the modules they call) sees an edit to either.

    Args:
        adapter: the adapter's ``__file__``.
    """
    digest = hashlib.sha256(Path(__file__).read_bytes() + b"\0" + Path(adapter).read_bytes())
    return f"real-image picker {digest.hexdigest()[:16]}"


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
        #: picks by cell so far: how many, how many in the exact cell, how many with the intervened
        #: attributes in their cell
        self.found = {"picks": 0, "exact_cell": 0, "intervened_cell": 0}
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

    def _apart(self, wanted: torch.Tensor, intervened: Sequence[str]) -> torch.Tensor:
        """N × pool: how far each pool image's cell is from each wanted one, lexicographically: the
        intervened attributes' distance first, then how many other discrete attributes differ, then
        the other continuous attributes' bin distance (each tier breaks the ties of the one before)."""
        names = self.domain.factor_names
        discrete = torch.tensor([name in self.domain.categorical_factors for name in names])
        gap = (wanted[:, None, :] - self.pool_cells[None]).abs()
        gap = torch.where(discrete, (gap > 0).long(), gap)
        first = torch.tensor([name in intervened for name in names])
        total = torch.zeros(gap.shape[:2], dtype=torch.long)
        for tier in (first, ~first & discrete, ~first & ~discrete):
            distance = gap[..., tier].sum(2)
            total = total * (int(distance.max()) + 1 if distance.numel() else 1) + distance
        return total

    def _count(self, wanted: torch.Tensor, chosen: torch.Tensor, intervened: Sequence[str]) -> None:
        """Adds the picks of ``chosen`` (pool rows) for cells ``wanted`` to :attr:`found`."""
        held = self.pool_cells[chosen]
        first = torch.tensor([name in intervened for name in self.domain.factor_names])
        self.found["picks"] += len(chosen)
        self.found["exact_cell"] += int((held == wanted).all(1).sum())
        self.found["intervened_cell"] += int((held[:, first] == wanted[:, first]).all(1).sum())

    def random(self, x: torch.Tensor, intervention: dict, generator: torch.Generator) -> torch.Tensor:
        """A random pool image in each counterfactual's cell (the nearest cell where none is)."""
        wanted = self.target_cells(x, intervention)
        apart = self._apart(wanted, list(intervention)).double()
        apart += torch.rand(apart.shape, generator=generator, device=generator.device).cpu().double() * 0.5
        chosen = apart.argmin(1)
        self._count(wanted, chosen, list(intervention))
        return self.pool[chosen].to(device=x.device, dtype=x.dtype)

    def nearest(self, x: torch.Tensor, intervention: dict) -> torch.Tensor:
        """The pool image in each counterfactual's cell (the nearest cell where none is) nearest the input."""
        wanted = self.target_cells(x, intervention)
        apart = self._apart(wanted, list(intervention))
        closest = apart == apart.min(1, keepdim=True).values
        pixels = torch.cdist(x.detach().cpu().float().flatten(1), self.pool.flatten(1))
        pixels = torch.where(closest, pixels, torch.full_like(pixels, float("inf")))
        chosen = pixels.argmin(1)
        self._count(wanted, chosen, list(intervention))
        return self.pool[chosen].to(device=x.device, dtype=x.dtype)

    def any(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """A random pool image per input, whatever its cell (the intervention is ignored)."""
        chosen = torch.randint(len(self.pool), (len(x),), generator=generator, device=generator.device).cpu()
        return self.pool[chosen].to(device=x.device, dtype=x.dtype)
