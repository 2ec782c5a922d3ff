"""Per-input embedding features kept with a set-level score, so two runs can be compared by a paired test.

A set-level realism score (FID, KID, density, coverage) has one value per run and task, computed
from the counterfactuals' embedding features against real images. To test whether two methods
differ on it, :mod:`cfcheck.reporting.compare_sets` needs the features themselves: each kept
counterfactual's features with its input's position in the task (the ``input`` label of
``samples.csv``) and its target class, and a real reference set to score them against.

The reference is drawn by :meth:`SetFeatures.draw` from the real pool the score used, per class,
with a generator seeded by the task's seed and the class only: two runs of the same task that
score against the same pool keep the same reference rows for every class they share, whatever
their abstentions. (The paired test scores both runs against the first run's reference, so it
stays valid where the pools differ.)

In a run folder the features of every (kind, domain, task) lie in ``set_features.npz``
(:func:`write_set_features`, :func:`read_set_features`), float32, a reference that several tasks
share stored once.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfcheck.core.seeds import PAIRED_REFERENCE, seeded

__all__ = [
    "REFERENCE_PER_CLASS",
    "SET_FEATURES_FILE",
    "SetFeatures",
    "join_set_features",
    "read_set_features",
    "write_set_features",
]

#: real reference rows kept per target class (fewer when the pool holds fewer)
REFERENCE_PER_CLASS = 100
#: the file a run folder keeps them in
SET_FEATURES_FILE = "set_features.npz"


@dataclass(frozen=True)
class SetFeatures:
    """A scored set's per-input features and the real reference kept with them.

    Attributes:
        features: n×d embedding features of the kept counterfactuals (float32).
        classes: their n target classes.
        inputs: their n input positions in the task (the ``input`` label of ``samples.csv``).
        reference: m×d real features.
        reference_classes: their m classes.
    """

    features: np.ndarray
    classes: np.ndarray
    inputs: np.ndarray
    reference: np.ndarray
    reference_classes: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.features)
        if self.features.ndim != 2 or self.reference.ndim != 2 or self.features.shape[1] != self.reference.shape[1]:
            raise ValueError(
                f"features {self.features.shape} and reference {self.reference.shape} must be "
                "matrices with the same number of columns"
            )
        if len(self.classes) != n or len(self.inputs) != n:
            raise ValueError(
                f"{n} feature rows need {n} classes and inputs, got {len(self.classes)} and {len(self.inputs)}"
            )
        if len(self.reference_classes) != len(self.reference):
            raise ValueError("the reference needs one class per row")

    @classmethod
    def draw(
        cls,
        features: Any,
        classes: Any,
        inputs: Any,
        pool_features: Any,
        pool_labels: Any,
        *,
        seed: int,
        per_class: int = REFERENCE_PER_CLASS,
    ) -> SetFeatures:
        """Keep ``features`` with a real reference of up to ``per_class`` pool rows of each of their classes.

        Args:
            features: n×d features of the scored counterfactuals (a tensor or an array).
            classes: their target classes.
            inputs: their input positions in the task.
            pool_features, pool_labels: the real pool the score drew its own reference from.
            seed: the task's seed; with the class it fixes which pool rows are kept.
            per_class: reference rows per class.

        Returns:
            The :class:`SetFeatures`.
        """
        feats, labels = _array(features, np.float32), _array(classes, np.int64)
        pool, pool_classes = _array(pool_features, np.float32), _array(pool_labels, np.int64)
        rows, kept = [], []
        for label in np.unique(labels):
            candidates = np.flatnonzero(pool_classes == label)
            order = np.random.default_rng(seeded(int(seed), PAIRED_REFERENCE, int(label))).permutation(candidates)
            rows.append(pool[order[:per_class]])
            kept.append(np.full(min(per_class, len(order)), label, dtype=np.int64))
        reference = np.concatenate(rows) if rows else np.zeros((0, feats.shape[1]), np.float32)
        return cls(
            feats, labels, _array(inputs, np.int64), reference, np.concatenate(kept) if kept else np.zeros(0, np.int64)
        )

    def encode(self) -> dict[str, Any]:
        """A JSON-safe form (base64 arrays), for records that cross process boundaries."""
        return {
            name: {"dtype": str(a.dtype), "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}
            for name, a in self._arrays().items()
        }

    @classmethod
    def decode(cls, data: dict[str, Any]) -> SetFeatures:
        """The inverse of :meth:`encode`."""
        arrays = {
            name: np.frombuffer(base64.b64decode(v["data"]), dtype=v["dtype"]).reshape(v["shape"])
            for name, v in data.items()
        }
        return cls(**arrays)

    def _arrays(self) -> dict[str, np.ndarray]:
        return {
            "features": self.features,
            "classes": self.classes,
            "inputs": self.inputs,
            "reference": self.reference,
            "reference_classes": self.reference_classes,
        }


def write_set_features(path: Path, by_task: dict[tuple[str, str, str], SetFeatures]) -> None:
    """Write the features of every (kind, domain, task) into one ``.npz``; a reference several
    tasks share is stored once."""
    arrays: dict[str, np.ndarray] = {}
    index: list[list[str]] = []
    references: dict[str, str] = {}
    for number, (key, kept) in enumerate(sorted(by_task.items())):
        name = f"t{number}"
        arrays.update(
            {f"{name}.features": kept.features, f"{name}.classes": kept.classes, f"{name}.inputs": kept.inputs}
        )
        digest = hashlib.sha256(kept.reference.tobytes() + kept.reference_classes.tobytes()).hexdigest()
        if digest not in references:
            references[digest] = f"r{len(references)}"
            arrays[f"{references[digest]}.reference"] = kept.reference
            arrays[f"{references[digest]}.reference_classes"] = kept.reference_classes
        index.append([*key, name, references[digest]])
    arrays["index"] = np.array(index, dtype=str).reshape(len(index), 5)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # numpy stubs read the keywords as allow_pickle
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(path)


def read_set_features(path: Path) -> dict[tuple[str, str, str], SetFeatures]:
    """Read what :func:`write_set_features` wrote; an empty dict when there is no such file.

    Raises:
        ValueError: when the file is not one :func:`write_set_features` writes.
    """
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {}
            for kind, domain, task, name, ref in data["index"].tolist():
                out[(kind, domain, task)] = SetFeatures(
                    data[f"{name}.features"],
                    data[f"{name}.classes"],
                    data[f"{name}.inputs"],
                    data[f"{ref}.reference"],
                    data[f"{ref}.reference_classes"],
                )
            return out
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is not a cfcheck set-features file ({error})") from None


def join_set_features(run_dirs: list[Path], output: Path) -> int:
    """Join the ``set_features.npz`` of several run folders (the shards of one run) into ``output``'s;
    returns how many tasks it holds (0: none of the folders kept features, nothing written)."""
    joined: dict[tuple[str, str, str], SetFeatures] = {}
    for run_dir in run_dirs:
        joined.update(read_set_features(Path(run_dir) / SET_FEATURES_FILE))
    if joined:
        write_set_features(Path(output) / SET_FEATURES_FILE, joined)
    return len(joined)


def _array(value: Any, dtype: type) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(value), dtype=dtype)
