"""Labelled images in a class-per-folder tree (``root/<class>/*.png|jpg|…``), read lazily, and the
check of every file that a domain's load check runs (:meth:`FolderSource.problems`)."""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path

import numpy as np
import torch

from cfcheck.domains.registry import DomainError

__all__ = ["IMAGE_SUFFIXES", "FolderSource"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")


class FolderSource:
    """Labelled images in a class-per-folder tree, ``root/<class>/*.png|jpg|…``, read with Pillow
    when asked for. Classes are the sub-folders in sorted order (``class_names``).

    Args:
        root: the tree's root folder.
        mode: Pillow mode every image is converted to: ``"L"`` (1 channel) or ``"RGB"`` (3).
        size: (height, width) to resize to; None: every image must have the first image's size.
    """

    def __init__(self, root: str | os.PathLike[str], *, mode: str = "RGB", size: tuple[int, int] | None = None) -> None:
        self.root = Path(root)
        self.name = str(self.root)
        if not self.root.is_dir():
            raise DomainError(f"{self.root}: no such folder (expected root/<class>/<image files>)")
        if mode not in ("L", "RGB"):
            raise DomainError(f"{self.root}: mode must be 'L' or 'RGB', got {mode!r}")
        self.class_names = tuple(sorted(p.name for p in self.root.iterdir() if p.is_dir()))
        if len(self.class_names) < 2:
            raise DomainError(
                f"{self.root}: found {len(self.class_names)} class folder(s) {list(self.class_names)}; "
                "expected at least 2 (root/<class>/<image files>)"
            )
        files, labels = [], []
        for label, name in enumerate(self.class_names):
            found = sorted(p for p in (self.root / name).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise DomainError(
                    f"{self.root / name}: an empty class folder (no {', '.join(IMAGE_SUFFIXES)} files); every "
                    "sub-folder of the tree is a class, so it would shift the labels of the classes after it: "
                    "remove the folder or add its images"
                )
            files += found
            labels += [label] * len(found)
        if not files:
            raise DomainError(f"{self.root}: no image files ({', '.join(IMAGE_SUFFIXES)}) in its class folders")
        self.files, self.mode = files, mode
        self.labels = torch.tensor(labels, dtype=torch.int64)
        from PIL import Image

        with Image.open(files[0]) as first:
            width, height = first.size
        self.size = size if size is not None else (height, width)
        self._resize = size is not None
        self.shape = (1 if mode == "L" else 3, *self.size)

    def __len__(self) -> int:
        return len(self.files)

    @cached_property
    def image_ids(self) -> tuple[str, ...]:
        """Each image's path relative to the root, ``"<class>/<file>"`` (what an attribute table's
        CSV names it by, :mod:`cfcheck.domains.attributes_table`), in the images' order."""
        return tuple(path.relative_to(self.root).as_posix() for path in self.files)

    def read(self, index: torch.Tensor) -> torch.Tensor:
        from PIL import Image

        out = torch.empty((len(index), *self.shape), dtype=torch.float32)
        for row, i in enumerate(np.asarray(index, dtype=np.int64).tolist()):
            path = self.files[i]
            try:
                with Image.open(path) as image:
                    image = image.convert(self.mode)
                    if self._resize:
                        image = image.resize(self.size[::-1], Image.Resampling.BILINEAR)
                    pixels = np.array(image, dtype=np.uint8)  # a writable copy (torch.from_numpy below)
            except OSError as error:
                raise DomainError(f"{path}: not a readable image: {error}") from error
            if pixels.shape[:2] != tuple(self.size):
                raise DomainError(
                    f"{path}: {pixels.shape[1]}×{pixels.shape[0]} pixels, but the tree's images are "
                    f"{self.size[1]}×{self.size[0]}; resize them or pass size=(height, width)"
                )
            pixels = pixels[None] if pixels.ndim == 2 else np.moveaxis(pixels, -1, 0)
            out[row] = torch.from_numpy(np.ascontiguousarray(pixels)).float().div_(255.0)
        return out

    def problems(self) -> list[str]:
        """Every file of the tree that cannot be decoded or has another size than the tree's (one
        line each, the first ten named): each image is decoded once per machine and version of the
        tree (:func:`cfcheck.core.cache.memoise_on_disk`, keyed by :attr:`digest`)."""
        from cfcheck.core.cache import memoise_on_disk

        sizes = memoise_on_disk(
            "domains.folder_image_sizes", lambda: {"sizes": self._decoded_sizes()}, tree=self.digest
        )
        found = []
        for row, (height, width) in enumerate(sizes["sizes"].tolist()):
            if height < 0:
                found.append(f"{self.files[row]}: not a readable image")
            elif not self._resize and (height, width) != tuple(self.size):
                found.append(
                    f"{self.files[row]}: {width}×{height} pixels, but the tree's images are {self.size[1]}×"
                    f"{self.size[0]}; resize them or pass FolderSource(size=(height, width))"
                )
        if len(found) > 10:
            found = [*found[:10], f"{self.root}: and {len(found) - 10} more such files"]
        return found

    def _decoded_sizes(self) -> torch.Tensor:
        """(height, width) of every file, fully decoded; (-1, -1) where it cannot be."""
        from PIL import Image

        sizes = torch.full((len(self.files), 2), -1, dtype=torch.int64)
        for row, path in enumerate(self.files):
            try:
                with Image.open(path) as image:
                    image.load()
                    sizes[row] = torch.tensor([image.height, image.width])
            except (OSError, ValueError, SyntaxError):  # Pillow's errors for a damaged or unknown file
                continue
        return sizes

    @cached_property
    def digest(self) -> str:
        """sha256 of the labels, file names, sizes and modification times (not the pixels: cheap)."""
        digest = hashlib.sha256(f"{self.mode}{self.size}{self._resize}".encode())
        for path, label in zip(self.files, self.labels.tolist()):
            stat = path.stat()
            digest.update(f"{label}\0{path.relative_to(self.root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        return digest.hexdigest()
