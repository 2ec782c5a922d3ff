"""How many torch threads a cfcheck process takes: its share of the cores."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["share_cpu_between_xdist_workers", "threads_for_free_cores"]


def share_cpu_between_xdist_workers(config: Any) -> None:
    """Give each pytest-xdist worker its share of the cores: N workers each running torch's
    default thread pool oversubscribe the CPU and run many times slower. A single process on a
    busy machine takes the cores the load average leaves free (torch's threads spin-wait on
    a core another process holds), unless the user chose a thread count (OMP_NUM_THREADS)."""
    import torch

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and hasattr(config, "workerinput"):
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))
    elif workers <= 1 and not hasattr(config, "workerinput") and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(threads_for_free_cores(os.cpu_count() or 1, _load_average()))


def threads_for_free_cores(cores: int, load: float | None) -> int:
    """Threads for one process: the cores not already busy (rounded), at least 1."""
    if load is None:
        return cores
    return max(1, min(cores, int(cores - load + 0.5)))


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None
