"""Broken copies of a built test domain, for the failure-path tests: each is a private copy (in a
folder the caller gives) with one thing wrong, and a spec that names it.

- :func:`flipped_weight`: one byte of a weight file flipped (its sha256 no longer matches the
  manifest); the array layout.
- :func:`empty_class`: one class folder of the PNG tree emptied (the folder is kept).
- :func:`unreadable_image`: one PNG of a given split (``reference``, ``train``, …) overwritten with
  bytes that are not an image.
- :func:`mixed_sizes`: one PNG of a given split re-saved 4 pixels taller and wider than the others.

The split of an image is the one :class:`cfcheck.domains.data.ImageDomain` gives it: the same
``stratified_split`` over the labels, with the domain's seed and fractions (the tree lists its
images in the array's order, so the tree domain's splits are the array domain's).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .build import FRACTIONS, SPLIT_SEED, OwnDomain, domain_name, materialise, tree_class_folder
from .scenes import SCENES


@dataclass(frozen=True)
class Variant:
    """A broken copy of a test domain.

    Attributes:
        spec: the ``--cfcheck-domain`` / ``cfcheck calibrate --domain`` value of the broken domain.
        domain_name: the name the broken domain is reported under.
        path: the file (or folder) that was broken.
        what: one line saying what is wrong.
        copy: the whole copied domain (its other spec and the truth adapter).
    """

    spec: str
    domain_name: str
    path: Path
    what: str
    copy: OwnDomain


def flipped_weight(name: str, folder: str | os.PathLike[str], model: str = "cnn") -> Variant:
    """A copy of scene ``name`` whose ``models/<model>.safetensors`` has its last byte inverted."""
    copy = materialise(name, folder)
    path = copy.folder / "models" / f"{model}.safetensors"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such weight file; the models are {sorted(p.stem for p in path.parent.glob('*.safetensors'))}"
        )
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    return Variant(copy.spec, copy.domain_name, path, f"one byte of {model}'s weight file flipped", copy)


def empty_class(name: str, folder: str | os.PathLike[str], label: int = -1) -> Variant:
    """A copy of scene ``name``'s PNG tree with class ``label``'s folder emptied (the last class by default)."""
    copy = materialise(name, folder)
    scene = SCENES[name]
    label = label % len(scene.class_names)
    path = copy.folder / "tree" / "images" / tree_class_folder(scene, label)
    for file in path.iterdir():
        file.unlink()
    return Variant(copy.tree_spec, _tree_name(name), path, f"class folder {path.name} is empty", copy)


def unreadable_image(name: str, folder: str | os.PathLike[str], split: str = "reference") -> Variant:
    """A copy of scene ``name``'s PNG tree where one image of ``split`` is not an image."""
    copy = materialise(name, folder)
    path = image_of_split(copy, split)
    path.write_bytes(b"this is not a PNG image\n")
    return Variant(copy.tree_spec, _tree_name(name), path, f"{path.name} ({split} split) is not a readable image", copy)


def mixed_sizes(name: str, folder: str | os.PathLike[str], split: str = "reference") -> Variant:
    """A copy of scene ``name``'s PNG tree where one image of ``split`` is 4 pixels taller and wider."""
    from PIL import Image

    copy = materialise(name, folder)
    path = image_of_split(copy, split)
    with Image.open(path) as image:
        width, height = image.size
        larger = image.resize((width + 4, height + 4), Image.Resampling.BILINEAR)
    larger.save(path)
    return Variant(
        copy.tree_spec,
        _tree_name(name),
        path,
        f"{path.name} ({split} split) is {width + 4}×{height + 4}, the others {width}×{height}",
        copy,
    )


def split_rows(name: str, split: str) -> np.ndarray:
    """The rows of the scene's data (its image indices) in ``split``, as ImageDomain divides them."""
    import torch

    from cfcheck.domains.data import stratified_split

    scene = SCENES[name]
    labels = torch.arange(len(scene.class_names)).repeat_interleave(scene.per_class)
    parts = stratified_split(labels, FRACTIONS, SPLIT_SEED)
    if split not in parts:
        raise ValueError(f"no split {split!r}; the splits are {sorted(parts)}")
    return parts[split].numpy()


def image_of_split(copy: OwnDomain, split: str) -> Path:
    """The PNG of the first image of ``split`` (never the tree's first file, which sets the size)."""
    scene = SCENES[copy.name]
    row = int(next(r for r in split_rows(copy.name, split) if r != 0))
    label = row // scene.per_class
    return copy.folder / "tree" / "images" / tree_class_folder(scene, label) / f"{row:05d}.png"


def _tree_name(name: str) -> str:
    return f"{domain_name(name)}_tree"
