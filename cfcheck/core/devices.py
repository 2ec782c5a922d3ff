"""Which device a cfcheck process runs on: one GPU per pytest-xdist worker where there are several."""

from __future__ import annotations

import os
import re
from typing import Any

__all__ = ["describe_device", "pin_worker_device", "worker_device"]

_WORKER = re.compile(r"gw(\d+)")


def worker_device(device: Any, worker: str | None, device_count: int) -> Any:
    """The device one process uses, given the device the run asked for.

    The rule: a run that asked for CUDA without naming a GPU (``--cfcheck-device cuda``, or
    ``auto`` on a machine with CUDA) puts pytest-xdist worker ``gwN`` on
    ``cuda:<N % device_count>``, so ``pytest -n 8`` on a machine with 8 GPUs gives each worker
    its own GPU (and ``-n 16`` two workers per GPU). Everything else is left as it is: a named
    GPU (``cuda:1``, the user's choice), the CPU (whose cores the workers share by threads,
    :mod:`cfcheck.core.threads`), a single process (``worker`` ``None``: torch's current GPU)
    and a worker name that is not ``gwN``.

    Args:
        device: the resolved ``--cfcheck-device`` (a ``torch.device``).
        worker: ``PYTEST_XDIST_WORKER`` (``"gw0"``, ``"gw1"``, …), ``None`` outside xdist.
        device_count: how many GPUs this process sees (``torch.cuda.device_count()``).

    Returns:
        The ``torch.device`` to use.

    Example:
        >>> import torch
        >>> worker_device(torch.device("cuda"), "gw5", 4)
        device(type='cuda', index=1)
        >>> worker_device(torch.device("cpu"), "gw5", 4)
        device(type='cpu')
    """
    import torch

    if device.type != "cuda" or device.index is not None or worker is None or device_count < 1:
        return device
    match = _WORKER.fullmatch(worker)
    if match is None:
        return device
    return torch.device("cuda", int(match.group(1)) % device_count)


def pin_worker_device(device: Any) -> Any:
    """:func:`worker_device` for this process (its xdist worker name and the GPUs it sees); a
    CUDA device it returns is also made torch's current one, so a method's bare ``"cuda"``
    tensors land on the same GPU as cfcheck's."""
    import torch

    if device.type != "cuda":
        return device
    pinned = worker_device(device, os.environ.get("PYTEST_XDIST_WORKER"), torch.cuda.device_count())
    if pinned.index is not None:
        torch.cuda.set_device(pinned)
    return pinned


def describe_device(device: Any) -> str:
    """The device for a scorecard's provenance: ``cpu``, or ``cuda:1 (NVIDIA H200)``."""
    import torch

    if device.type != "cuda":
        return str(device)
    index = device.index if device.index is not None else torch.cuda.current_device()
    return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
