"""A domain from the user's own labelled images: arrays or a class-per-folder tree.

:class:`ImageDomain` gives cfcheck's protocol what it needs from real data: the split roles
(train, oracle training, a never-scored selection split, the scored inputs, a reference for
realism), made reproducibly from a seed and class by class when the user has only train/test
or a single set; the role map of the user's models; their model store (a folder of checked
safetensors weights, :class:`cfcheck.models.store.ModelStore`) and the folder where
``cfcheck calibrate --domain`` writes the domain's bars.

Images are read lazily and in batches: a source keeps only labels in memory, a split is a list of
indices into its source, and the engine embeds a large reference split batch by batch
(:meth:`ImageSplit.batches`). Every image is float32 in [0, 1], N×C×H×W, any channel count and size.

Example:
    >>> from cfcheck.domains.data import ArraySource, ImageDomain
    >>> source = ArraySource(images_uint8, labels, name="digits")            # doctest: +SKIP
    >>> domain = ImageDomain("digits", source, root="cfcheck_digits",       # doctest: +SKIP
    ...                      model_roles={"explained": ("cnn",), "oracles": ("o1", "o2", "o3"),
    ...                                   "embedding": ("embedding",)})
"""

from __future__ import annotations

import hashlib
import mmap
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.domains.base import SPLIT_ROLES, MissingCapability
from cfcheck.domains.folders import FolderSource
from cfcheck.domains.registry import DomainError

__all__ = ["ArraySource", "FolderSource", "ImageDomain", "ImageSplit", "DEFAULT_FRACTIONS"]

#: Split roles an ImageDomain makes: cfcheck's (train, selection, scored, reference) and the split
#: the user trains the oracle committee and the embedding on (never scored, never the reference)
ROLES = (*SPLIT_ROLES, "oracle_train")
#: How a single labelled set is divided, class by class, when the user gives no split of their own
DEFAULT_FRACTIONS = {"train": 0.35, "oracle_train": 0.15, "selection": 0.1, "scored": 0.15, "reference": 0.25}


class ArraySource:
    """Labelled images held as arrays: uint8 (divided by 255) or float in [0, 1], N×C×H×W or
    N×H×W (one channel) or N×H×W×C (``channels_last=True``). Memory-mapped ``.npy`` arrays stay on
    disk and are read batch by batch.

    Raises:
        DomainError: naming ``name`` when the counts differ, a label is not an integer class, or a
            float image lies outside [0, 1].
    """

    def __init__(self, images: Any, labels: Any, *, name: str = "arrays", channels_last: bool = False) -> None:
        self.name = name
        array = (
            images
            if isinstance(images, np.ndarray)
            else np.asarray(images.numpy() if isinstance(images, torch.Tensor) else images)
        )
        label_array = np.asarray(labels.numpy() if isinstance(labels, torch.Tensor) else labels)
        if array.ndim == 3:
            array = array[:, None] if not channels_last else array[..., None]
        if array.ndim != 4:
            raise DomainError(f"{name}: images must be N×C×H×W (or N×H×W), got shape {array.shape}")
        if label_array.ndim != 1 or len(label_array) != len(array):
            raise DomainError(
                f"{name}: {len(array)} images but labels of shape {label_array.shape}; "
                "expected one integer label per image"
            )
        if not np.issubdtype(label_array.dtype, np.integer):
            raise DomainError(f"{name}: labels must be integers (class indices), got dtype {label_array.dtype}")
        self._array, self._channels_last = array, channels_last
        self.labels = torch.as_tensor(label_array.astype(np.int64))
        channels_first = (array.shape[3], array.shape[1], array.shape[2]) if channels_last else array.shape[1:]
        self.shape = tuple(int(d) for d in channels_first)
        if array.dtype != np.uint8:
            for start in range(0, len(array), 4096):
                chunk = np.asarray(array[start : start + 4096])
                if not np.isfinite(chunk).all() or chunk.min(initial=0.0) < 0 or chunk.max(initial=0.0) > 1:
                    found = (
                        "non-finite values (NaN or inf)"
                        if not np.isfinite(chunk).all()
                        else f"values from {float(chunk.min()):.4g} to {float(chunk.max()):.4g}"
                    )
                    raise DomainError(
                        f"{name}: float images must lie in [0, 1] (found {found} in images "
                        f"{start}..{start + len(chunk) - 1}); scale them or pass uint8"
                    )
                self._release()

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        images_key: str = "images",
        labels_key: str = "labels",
        channels_last: bool = False,
    ) -> ArraySource:
        """Arrays from ``.npz`` / ``.safetensors`` (two keys) or a ``.npy`` of images beside a
        ``<stem>.labels.npy`` (memory-mapped: read lazily)."""
        path = Path(path)
        if not path.is_file():
            raise DomainError(f"{path}: no such file")
        if path.suffix == ".npy":
            labels_path = path.with_name(f"{path.stem}.labels.npy")
            if not labels_path.is_file():
                raise DomainError(f"{path}: a .npy of images needs its labels in {labels_path.name}")
            return cls(np.load(path, mmap_mode="r"), np.load(labels_path), name=str(path), channels_last=channels_last)
        if path.suffix == ".npz":
            with np.load(path) as data:
                missing = [k for k in (images_key, labels_key) if k not in data.files]
                if missing:
                    raise DomainError(f"{path}: no arrays named {missing}; it holds {data.files}")
                return cls(data[images_key], data[labels_key], name=str(path), channels_last=channels_last)
        if path.suffix == ".safetensors":
            from safetensors.numpy import load_file

            data = load_file(str(path))
            missing = [k for k in (images_key, labels_key) if k not in data]
            if missing:
                raise DomainError(f"{path}: no tensors named {missing}; it holds {sorted(data)}")
            return cls(data[images_key], data[labels_key], name=str(path), channels_last=channels_last)
        raise DomainError(f"{path}: expected a .npz, .npy or .safetensors file")

    def __len__(self) -> int:
        return len(self.labels)

    def read(self, index: torch.Tensor) -> torch.Tensor:
        """Images at ``index`` (sorted reads are fastest), float32 in [0, 1]."""
        chunk = np.array(self._array[np.asarray(index, dtype=np.int64)])
        self._release()
        if self._channels_last:
            chunk = np.moveaxis(chunk, -1, 1)
        out = torch.from_numpy(np.ascontiguousarray(chunk))
        return out.float().div_(255.0) if chunk.dtype == np.uint8 else out.float()

    @cached_property
    def digest(self) -> str:
        """sha256 of the labels and of every image's bytes (read in chunks)."""
        digest = hashlib.sha256(self.labels.numpy().tobytes())
        for start in range(0, len(self), 4096):
            digest.update(np.ascontiguousarray(self._array[start : start + 4096]).tobytes())
            self._release()
        return digest.hexdigest()

    def _release(self) -> None:
        """Drop a memory-mapped array's pages from this process once read: the operating system
        keeps them in its file cache, but otherwise every page ever touched counts as the
        process's resident memory for as long as the map lives (measured: a 586 MB reference
        split read once added 586 MB to the peak)."""
        if isinstance(self._array, np.memmap) and hasattr(mmap, "MADV_DONTNEED"):
            # numpy keeps its mmap there (a private attribute numpy's stubs do not declare)
            self._array._mmap.madvise(mmap.MADV_DONTNEED)  # type: ignore[attr-defined]  # noqa: SLF001


class ImageSplit:
    """Some images of a source, by index: ``labels`` in memory, images read on demand.

    ``images`` reads the whole split (kept for the split's life: use it for small splits);
    :meth:`batches` and :meth:`take` read parts of it.
    """

    factors = None  # real data has no known generative factors

    def __init__(self, source: Any, index: torch.Tensor, name: str) -> None:
        self.source, self.index, self.name = source, index, name
        self.labels = source.labels[index]

    def __len__(self) -> int:
        return len(self.index)

    @cached_property
    def images(self) -> torch.Tensor:
        return torch.cat(list(self.batches(1024))) if len(self) else torch.empty((0, *self.source.shape))

    def take(self, rows: torch.Tensor) -> torch.Tensor:
        """The images at positions ``rows`` of the split."""
        return self.source.read(self.index[rows])

    def batches(self, size: int) -> Iterator[torch.Tensor]:
        """The split's images in order, ``size`` at a time."""
        for start in range(0, len(self), size):
            yield self.source.read(self.index[start : start + size])

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.source.digest}:{self.name}:".encode() + self.index.numpy().tobytes()).hexdigest()

    def prefix(self, n: int) -> ImageSplit:
        return ImageSplit(self.source, self.index[:n], self.name)


def stratified_split(labels: torch.Tensor, fractions: Mapping[str, float], seed: int) -> dict[str, torch.Tensor]:
    """Indices of each part, class by class: every class's images are shuffled with ``seed`` and
    cut by the cumulative ``fractions`` (which must sum to 1); indices come sorted."""
    total = sum(fractions.values())
    if abs(total - 1) > 1e-6 or any(f < 0 for f in fractions.values()):
        raise DomainError(f"split fractions must be >= 0 and sum to 1, got {dict(fractions)} (sum {total:g})")
    generator = torch.Generator().manual_seed(seed)
    parts: dict[str, list[torch.Tensor]] = {name: [] for name in fractions}
    for label in labels.unique().tolist():
        members = torch.nonzero(labels == label).flatten()
        members = members[torch.randperm(len(members), generator=generator)]
        bounds = np.round(np.cumsum([0.0, *fractions.values()]) * len(members)).astype(int)
        for (name, _), low, high in zip(fractions.items(), bounds[:-1], bounds[1:]):
            parts[name].append(members[low:high])
    return {
        name: torch.cat(chunks).sort().values if chunks else torch.empty(0, dtype=torch.int64)
        for name, chunks in parts.items()
    }


class ImageDomain:
    """A domain of the user's labelled images (see the module docstring).

    Args:
        name: the domain's name in scores and reports (no '/').
        data: one labelled source (:class:`ArraySource`, :class:`FolderSource`) divided by
            ``fractions``; or a mapping: ``{"train": ..., "test": ...}`` (test is scored, train is
            divided into the other roles by ``fractions``), or one source per role of :data:`ROLES`.
        root: the domain's folder: its model store (``root/models``) and calibration (``root``).
        model_roles: role → model names (the roles of :data:`cfcheck.domains.base.MODEL_ROLES`; with
            ``attributes``, the attribute readers' store entries name what each reads, ``attribute=``).
        class_names: names of the classes (default: a folder source's class folders, else "0", "1", …).
        seed: the seed the splits are drawn with.
        fractions: the share of each role (class by class) when the data does not come split.
        model_store: the store of the models (default: ``ModelStore(root / "models", name)``);
            a :class:`~cfcheck.models.store.ModuleStore` hands over ready modules.
        attributes: the images' attributes, causal graph and mechanisms
            (:class:`cfcheck.domains.attributes.Attributes`): the domain is then a structural causal
            model over them (``parents``, ``sample_intervention``, ``parent_bin``,
            ``counterfactual_parents``), without a true counterfactual.
    """

    factor_names: tuple[str, ...] = ()
    categorical_factors: tuple[str, ...] = ()
    capabilities: frozenset[str] = frozenset()
    card_calibrated = False

    def __init__(
        self,
        name: str,
        data: Any,
        *,
        root: str | os.PathLike[str],
        model_roles: Mapping[str, Sequence[str]],
        class_names: Sequence[str] | None = None,
        seed: int = 0,
        fractions: Mapping[str, float] | None = None,
        model_store: Any = None,
        attributes: Any = None,
    ) -> None:
        from cfcheck.models.store import ModelStore

        self.name = name
        self.root = Path(root)
        self.model_roles = {role: tuple(names) for role, names in model_roles.items()}
        self._splits = self._make_splits(data, seed, fractions)
        shapes = {split.source.shape for split in self._splits.values()}
        if len(shapes) != 1:
            raise DomainError(f"domain {name!r}: its sources have different image shapes {sorted(shapes)}")
        self.input_shape = shapes.pop()
        labels = torch.cat([split.source.labels for split in self._splits.values()])
        found = class_names or getattr(next(iter(self._splits.values())).source, "class_names", None)
        self.num_classes = len(found) if found else int(labels.max()) + 1
        if int(labels.min()) < 0 or int(labels.max()) >= self.num_classes:
            raise DomainError(
                f"domain {name!r}: labels must lie in [0, {self.num_classes - 1}] "
                f"(its classes), found {int(labels.min())}..{int(labels.max())}"
            )
        self.class_names = tuple(found) if found else tuple(str(c) for c in range(self.num_classes))
        self.split_roles = {role: role for role in self._splits}
        self.model_store = model_store if model_store is not None else ModelStore(self.root / "models", name)
        self.calibration_dir = self.root
        self.attributes, self._scm = attributes, None
        self._attribute_rows: dict[int, dict[str, torch.Tensor]] = {}
        if attributes is not None:
            from cfcheck.domains.attributes_scm import bind_attributes

            self._attribute_rows, self._scm = bind_attributes(attributes, data)
            self.factor_names, self.categorical_factors = attributes.names, attributes.categorical_names

    def protocol_identity(self) -> dict[str, Any]:
        """The domain part of its protocols' identity: its classes, image shape, each split's digest
        (the images, labels and indices it holds) and, where it declares attributes, their declaration,
        table and intervention bins."""
        identity: dict[str, Any] = {
            "classes": list(self.class_names),
            "input_shape": list(self.input_shape),
            "splits": {role: split.digest for role, split in sorted(self._splits.items())},
        }
        if self._scm is not None:  # the attributes an SCM run intervenes on and reads back
            from cfcheck.core.cache import tensor_digest
            from cfcheck.domains.attributes_mechanisms import declaration_digest

            names = self._scm.attributes.names
            identity["attributes"] = {
                "declaration": declaration_digest(self._scm.attributes),
                "table": tensor_digest(*(self._scm.columns[name] for name in names)),
                "bins": {name: edges.tolist() for name, edges in sorted(self._scm.edges.items())},
            }
        return identity

    def _make_splits(self, data: Any, seed: int, fractions: Mapping[str, float] | None) -> dict[str, ImageSplit]:
        if not isinstance(data, Mapping):
            parts = stratified_split(data.labels, fractions or DEFAULT_FRACTIONS, seed)
            splits = {role: ImageSplit(data, index, role) for role, index in parts.items()}
        elif set(SPLIT_ROLES) <= set(data):
            unknown = sorted(set(data) - set(ROLES))
            if unknown:
                raise DomainError(f"domain {self.name!r}: unknown split roles {unknown}; expected {list(ROLES)}")
            splits = {role: ImageSplit(source, torch.arange(len(source)), role) for role, source in data.items()}
        elif set(data) == {"train", "test"}:
            shares = dict(fractions or {role: share for role, share in DEFAULT_FRACTIONS.items() if role != "scored"})
            total = sum(shares.values())
            parts = stratified_split(data["train"].labels, {k: v / total for k, v in shares.items()}, seed)
            splits = {role: ImageSplit(data["train"], index, role) for role, index in parts.items()}
            splits["scored"] = ImageSplit(data["test"], torch.arange(len(data["test"])), "scored")
        else:
            raise DomainError(
                f"domain {self.name!r}: data must be one labelled source, {{'train', 'test'}} or one "
                f"source per role of {list(ROLES)}; got keys {sorted(data)}"
            )
        missing = [role for role in SPLIT_ROLES if role not in splits or len(splits[role]) == 0]
        if missing:
            raise DomainError(
                f"domain {self.name!r}: the splits {missing} are empty; give more images or other fractions"
            )
        return splits

    def data_problems(self) -> list[str]:
        """What the domain's sources report of their files (:meth:`FolderSource.problems`: every
        image decodes and has the tree's size), each once: arrays are checked when they are made."""
        sources = {id(split.source): split.source for split in self._splits.values()}
        return [line for source in sources.values() if hasattr(source, "problems") for line in source.problems()]

    # -- the attributes' structural causal model (ImageDomain(attributes=...)) ---------------------
    def _attribute_scm(self) -> Any:
        if self._scm is None:
            raise ValueError(
                f"domain {self.name!r} declares no attributes: it has no structural causal model "
                "(ImageDomain(..., attributes=Attributes(...)) declares one)"
            )
        return self._scm

    def parents(self, split: str, index: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every attribute of the split's images at ``index`` (int64 codes, float32 values), keyed by name."""
        self._attribute_scm()  # raises for a domain without attributes
        chosen = self.split(split)
        rows = chosen.index[torch.as_tensor(index, dtype=torch.int64)]
        return {name: column[rows].clone() for name, column in self._attribute_rows[id(chosen.source)].items()}

    def sample_intervention(
        self, factor: str, parents: dict[str, torch.Tensor], generator: torch.Generator
    ) -> torch.Tensor:
        """New values of ``factor``, each in another bin than the observed one."""
        return self._attribute_scm().sample_intervention(factor, parents, generator)

    def parent_bin(self, factor: str, values: torch.Tensor) -> torch.Tensor:
        """The bin (int64) of each value: a discrete attribute's code, a continuous one's bin."""
        return self._attribute_scm().parent_bin(factor, values)

    def counterfactual_parents(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Every attribute after ``intervention``, propagated by the attributes' mechanisms."""
        return self._attribute_scm().propagate(self.parents(split, index), intervention)

    def intervention_counterfactual(
        self, split: str, index: torch.Tensor, intervention: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """Always raises :class:`~cfcheck.domains.base.MissingCapability`: real data has no true counterfactual."""
        raise MissingCapability(
            f"domain {self.name!r} cannot compute intervention counterfactual: real data has no true "
            "counterfactual (no known process renders its images from their attributes)"
        )

    def attribute_problems(self) -> list[str]:
        """What the load check finds in the attributes' mechanisms (:meth:`AttributeSCM.problems`) and in
        the store entries of the models that read them (:func:`~cfcheck.domains.attributes_scm.reading_role_problems`)."""
        from cfcheck.domains.attributes_scm import reading_role_problems

        own = [] if self._scm is None else self._scm.problems()
        return own + reading_role_problems(self.factor_names, self.model_roles, self.model_store)

    def split(self, name: str, n: int | None = None) -> ImageSplit:
        """The split called ``name`` (a role of :data:`ROLES`), or its first ``n`` images."""
        if name not in self._splits:
            raise ValueError(f"domain {self.name!r} has no split {name!r}; its splits: {sorted(self._splits)}")
        split = self._splits[name]
        if n is None:
            return split
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(split):
            raise ValueError(f"n must be an int in [0, {len(split)}] for split {name!r}, got {n!r}")
        return split.prefix(n)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{role} {len(split)}" for role, split in self._splits.items())
        return f"ImageDomain({self.name!r}, {self.input_shape}, {self.num_classes} classes; {sizes})"
