"""The true counterfactual of a test domain's image: the same style row re-rendered with the target
class (:mod:`tests.own_domains.scenes`).

:class:`RenderedTruth` finds which image it was given by its pixels: every image of the domain's
data is indexed by the bytes of its uint8 pixels (inputs arrive as float32 in [0, 1], exactly
``uint8 / 255``), so an input from any split (scored, selection, reference) is found, in any order
and on any device. An input that is none of the domain's images raises a ``ValueError`` that says
how many were not found.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cfcheck.kinds.vce.methods.contract import VisualExplainer

from .build import MARKER
from .scenes import SCENES


def pixel_key(image: np.ndarray) -> bytes:
    """A 16-byte digest of a uint8 C×H×W image."""
    return hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).digest()


def as_uint8(x: torch.Tensor) -> np.ndarray:
    """Float images in [0, 1] as the uint8 pixels they were read from."""
    return torch.round(x.detach().float().cpu() * 255.0).clamp_(0, 255).to(torch.uint8).numpy()


class RenderedTruth(VisualExplainer):
    """The true counterfactual of every input of a test domain (a user positive control).

    Args:
        domain: a domain built by :mod:`tests.own_domains.build` (its root holds ``own_domain.json``).

    Raises:
        ValueError: at construction when the domain is not one of the test domains; in ``explain``
            when an input is not one of the domain's images.
    """

    def __init__(self, domain: Any) -> None:
        root = Path(getattr(domain, "root", ""))
        marker = root / MARKER
        if not marker.is_file():
            raise ValueError(
                f"domain {getattr(domain, 'name', domain)!r} is not a tests.own_domains test domain: no {MARKER} "
                f"in its root {str(root)!r}, so its images' style parameters are unknown"
            )
        info = json.loads(marker.read_text())
        self.domain_name = str(getattr(domain, "name", info["domain"]))
        self.scene = SCENES[info["scene"]]
        images = np.load(root / info["images"], mmap_mode="r")
        self.styles = np.load(root / info["styles"])
        self.labels = np.load((root / info["images"]).with_suffix(".labels.npy"))
        self._index = {pixel_key(image): row for row, image in enumerate(np.asarray(images))}

    def rows(self, x: torch.Tensor) -> np.ndarray:
        """Each input's row in the domain's data (ValueError for inputs that are none of them)."""
        keys = [pixel_key(image) for image in as_uint8(x)]
        missing = sum(key not in self._index for key in keys)
        if missing:
            raise ValueError(
                f"{missing} of {len(keys)} inputs are not images of test domain {self.domain_name!r} "
                "(matched by their uint8 pixels); the true counterfactual needs each input's style parameters"
            )
        return np.array([self._index[key] for key in keys], dtype=np.int64)

    def truth(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The true counterfactuals of ``x`` under do(class = ``target``), float32 on ``x``'s device."""
        rendered = self.scene.render(target.cpu().numpy(), self.styles[self.rows(x)])
        return torch.from_numpy(rendered).float().div_(255.0).to(device=x.device, dtype=x.dtype)

    def counterfactuals(
        self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module, generator: torch.Generator
    ) -> torch.Tensor:
        """The true counterfactuals (the classifier and the generator are not used)."""
        return self.truth(x, target)
