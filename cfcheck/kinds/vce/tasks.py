"""Visual-counterfactual tasks: which images to explain, towards which targets, for which model.

A task is (explained classifier, pair set, seed). The inputs depend only on (pair set, seed),
so explanations of the same images for the trained and the randomised classifier can be
compared image by image (model-parameter randomisation, Väth et al. H2).

Pair sets follow Väth et al. §4: "ideal" pairs send each digit to the class the oracle
committee confuses it with most (the analogue of DVCE's WordNet-nearest class); "other" pairs
send each image to a random other class, excluding the source and its ideal target.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import torch

from cfcheck.core.seeds import TASK_INPUTS, seeded
from cfcheck.kinds.base import Task
from cfcheck.kinds.vce.section import PAIR_SETS


@dataclass(frozen=True, kw_only=True)
class VCETask(Task):
    kind: ClassVar[str] = "vce"
    classifier: str
    pair_set: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.pair_set not in PAIR_SETS:
            raise ValueError(f"pair_set must be one of {PAIR_SETS}, got {self.pair_set!r}")

    @property
    def id(self) -> str:
        return f"{self.classifier}/{self.pair_set}/seed{self.seed}"

    def with_classifier(self, classifier: str) -> VCETask:
        """The same inputs and targets explained for another classifier (no dependencies)."""
        return replace(self, classifier=classifier, needs=())


class TooFewInputs(ValueError):
    """The scored split holds fewer images of a class than the profile's inputs per source class."""


@dataclass(frozen=True)
class TaskInputs:
    x: torch.Tensor  # N×C×H×W in [0,1]
    source: torch.Tensor  # int64 N, true digit of x
    target: torch.Tensor  # int64 N, requested class
    index: torch.Tensor  # int64 N, position of x in the test split

    def __len__(self) -> int:
        return len(self.x)


def ideal_targets(committee_probs: torch.Tensor, labels: torch.Tensor, num_classes: int) -> dict[int, int]:
    """For each class, the other class the committee assigns most probability to, on average."""
    if committee_probs.ndim != 2 or committee_probs.shape[1] != num_classes:
        raise ValueError(f"committee_probs must be N×{num_classes}, got {tuple(committee_probs.shape)}")
    targets = {}
    for source in range(num_classes):
        rows = committee_probs[labels == source]
        if len(rows) == 0:
            raise ValueError(f"no images of class {source} to estimate its ideal target from")
        confusion = rows.mean(dim=0).clone()
        confusion[source] = -1.0
        targets[source] = int(confusion.argmax())
    return targets


def select_inputs(
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    pair_set: str,
    seed: int,
    n_per_source: int,
    ideal: dict[int, int],
    num_classes: int,
) -> TaskInputs:
    """``n_per_source`` images of every class, drawn by ``seed``, with their targets."""
    if n_per_source < 1:
        raise ValueError(f"n_per_source must be >= 1, got {n_per_source}")
    generator = torch.Generator().manual_seed(seeded(seed, TASK_INPUTS, 0 if pair_set == "ideal" else 1))
    chosen, sources, targets = [], [], []
    for source in range(num_classes):
        candidates = torch.nonzero(labels == source).flatten()
        if len(candidates) < n_per_source:
            raise TooFewInputs(f"only {len(candidates)} images of class {source}, need {n_per_source}")
        picked = candidates[torch.randperm(len(candidates), generator=generator)[:n_per_source]]
        chosen.append(picked)
        sources.append(torch.full((n_per_source,), source, dtype=torch.long))
        if pair_set == "ideal":
            targets.append(torch.full((n_per_source,), ideal[source], dtype=torch.long))
        else:
            others = torch.tensor([c for c in range(num_classes) if c not in (source, ideal.get(source))])
            targets.append(others[torch.randint(len(others), (n_per_source,), generator=generator)])
    index = torch.cat(chosen)
    return TaskInputs(images[index].clone(), torch.cat(sources), torch.cat(targets), index)
