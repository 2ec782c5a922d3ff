"""Sharding a run over machines: a deterministic, balanced share of the tasks per shard.

``--cfcheck-shard I/N`` keeps the tests of the task groups assigned to shard I (1-based). A
group is a task with the tasks that need its outputs (the xdist group), so dependent tasks stay
together; tests without a task (the contract suites) form one group. Groups are assigned
largest first to the least-loaded shard (ties by name), so every shard computes the same
assignment from the same collection, and the shares differ by at most one group's tests.
``cfcheck merge`` (:mod:`cfcheck.reporting.merge`) joins the shards' run folders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/3"`` → Shard(2, 3); ValueError naming the problem otherwise."""
        match = _SPEC.match(text or "")
        if not match:
            raise ValueError(f"--cfcheck-shard expects I/N such as 1/2, got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"--cfcheck-shard {text}: I must be between 1 and N (N >= 1)")
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """What a shard adds to its run folder's name."""
        return f"-shard{self.index}of{self.count}"


def assign_groups(sizes: Mapping[str, int], count: int) -> dict[str, int]:
    """Group name → shard (1-based): largest group first onto the least-loaded shard.

    Args:
        sizes: group name → its number of tests (its cost estimate).
        count: the number of shards.

    Returns:
        The assignment; deterministic in ``sizes`` (ties broken by name and shard number).

    Example:
        >>> assign_groups({"a": 5, "b": 3, "c": 2}, 2)
        {'a': 1, 'b': 2, 'c': 2}
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    loads = [0] * count
    assignment = {}
    for name, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        shard = min(range(count), key=lambda s: (loads[s], s))
        loads[shard] += size
        assignment[name] = shard + 1
    return dict(sorted(assignment.items()))
