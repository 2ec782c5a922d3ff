"""Calling a method under test, whatever its kind: exceptions, timeouts, mutation, outputs.

A method's bad output (wrong shape, NaN, out of range, mutated input, an exception, a call
that does not return in time) becomes a :class:`MethodOutputError` stored for its task: the
first test that scores the task fails with the full report (for an exception: its type,
message and where the method raised it), every later test of the task with a one-line pointer
to that report, and the rest of the session goes on.

Each kind says what its output must look like through :class:`OutputSpec`; everything else
here is shared by the four kinds.
"""

from __future__ import annotations

import os
import signal
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from cfcheck.core.answer_reads import AnswerReads, method_code
from cfcheck.core.costs import MethodClock

RANGE_TOLERANCE = 1e-4
#: generation that takes longer than this reports its progress
PROGRESS_AFTER_S = 3.0


class MethodOutputError(Exception):
    """The method under test returned something cfcheck cannot score, raised, or hung.

    ``message`` names the fault; ``where`` holds ``file:line in function`` lines locating an
    exception in the method's code. ``str()`` is the full report, :attr:`summary` one line.
    A task's cached error also remembers which test got the full report (:meth:`for_task`).
    """

    def __init__(self, message: str, *, where: tuple[str, ...] = (), summary: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = tuple(where)
        self._summary = summary
        self.reported = False
        self.reported_in: str | None = None

    def __str__(self) -> str:
        return "\n".join([self.message, *(f"    {line}" for line in self.where)])

    @property
    def summary(self) -> str:
        """The fault in one line, with the innermost place the method raised it."""
        if self._summary is not None:
            return self._summary
        lines = self.message.splitlines() or [""]
        text = lines[0] + (" …" if len(lines) > 1 else "")
        return f"{text} ({self.where[0]})" if self.where else text

    def for_task(self, task_id: str, requester: str | None = None, noun: str = "outputs") -> MethodOutputError:
        """The error a test of ``task_id`` fails with: the full report for the first test that
        asks (``requester``, a pytest node id), a one-line pointer to it for every later one.
        ``noun`` names what the task lacks ("counterfactuals", "saliency maps")."""
        reason = f"no {noun}: {self.summary}"
        if not self.reported:
            self.reported, self.reported_in = True, requester
            return MethodOutputError(f"{task_id}: no {noun}: {self.message}", where=self.where, summary=reason)
        first_line = (self.message.splitlines() or [""])[0]
        pointer = self.reported_in or "the first failing test of this task"
        return MethodOutputError(f"{task_id}: no {noun}: {first_line} (full report in {pointer})", summary=reason)


class MethodTimeout(BaseException):
    """Raised inside a method call that ran past its time limit (a BaseException, so a method's
    own ``except Exception`` cannot swallow it)."""


@dataclass(frozen=True)
class MethodOutput:
    """What one task's calls returned, checked and normalised, on the CPU."""

    values: torch.Tensor  # N×K×… (K outputs per input; K = 1 for most methods)
    valid: torch.Tensor  # bool N: False where the method abstained

    def __len__(self) -> int:
        return int(self.valid.shape[0])


@dataclass(frozen=True)
class OutputSpec:
    """How a kind's output must look, relative to a reference input ``like`` (N×…).

    ``several``: an extra K axis after N is allowed (several outputs per input); ``required_k``
    demands it. ``value_range``: inclusive bounds (up to :data:`RANGE_TOLERANCE`), or None.
    """

    call: str  # the method's name, for messages: "explain", "counterfactual", ...
    several: bool = False
    required_k: bool = False
    value_range: tuple[float, float] | None = None
    clamp: bool = True  # clip values into the range after the check (tolerance only)


def check_output(raw: Any, like: torch.Tensor, spec: OutputSpec) -> MethodOutput:
    """Validate what a method returned for inputs shaped like ``like``; normalise it."""
    __tracebackhide__ = True
    call, valid = spec.call, None
    if isinstance(raw, tuple):
        if len(raw) != 2:
            raise MethodOutputError(
                f"{call} returned a tuple of {len(raw)} items; expected an output or (output, valid_mask)"
            )
        raw, valid = raw
    if not isinstance(raw, torch.Tensor):
        raise MethodOutputError(f"{call} returned {type(raw).__name__}; expected a torch.Tensor")
    n, rest = like.shape[0], tuple(like.shape[1:])
    if raw.shape == like.shape and not spec.required_k:
        values = raw.unsqueeze(1)
    elif spec.several and raw.ndim == like.ndim + 1 and raw.shape[0] == n and tuple(raw.shape[2:]) == rest:
        values = raw
    else:
        expected = [] if spec.required_k else [f"{tuple(like.shape)} (one per input)"]
        if spec.several:
            expected.append(f"({n}, K, {', '.join(map(str, rest))})")
        raise MethodOutputError(f"{call} returned shape {tuple(raw.shape)}; expected {' or '.join(expected)}")
    if raw.dtype != torch.float32:
        raise MethodOutputError(f"{call} returned dtype {raw.dtype}; expected torch.float32")
    if raw.device != like.device:
        raise MethodOutputError(f"{call} returned a tensor on {raw.device}; the inputs were on {like.device}")
    finite = torch.isfinite(values)
    if not bool(finite.all()):
        bad = int((~finite).flatten(1).any(1).sum())
        raise MethodOutputError(f"{call} returned NaN or Inf values for {bad} of {n} inputs")
    if spec.value_range is not None and values.numel():
        low, high = float(values.min()), float(values.max())
        lo, hi = spec.value_range
        if low < lo - RANGE_TOLERANCE or high > hi + RANGE_TOLERANCE:
            raise MethodOutputError(
                f"{call} returned values in [{low:.4g}, {high:.4g}]; they must lie in [{lo:g}, {hi:g}]"
            )
        if spec.clamp:
            values = values.clamp(lo, hi)
    if valid is None:
        valid = torch.ones(n, dtype=torch.bool, device=like.device)
    if not isinstance(valid, torch.Tensor) or valid.dtype != torch.bool or valid.shape != (n,):
        described = f"{valid.dtype} {tuple(valid.shape)}" if isinstance(valid, torch.Tensor) else type(valid).__name__
        raise MethodOutputError(f"the validity mask must be a bool tensor of shape ({n},); got {described}")
    return MethodOutput(values.detach().cpu(), valid.detach().cpu())


def invoke(
    call: str,
    function: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    *,
    watched: Mapping[str, torch.Tensor] | None = None,
    timeout: float | None = None,
    clock: MethodClock | None = None,
    reads: AnswerReads | None = None,
) -> Any:
    """One call of the method: a raised exception, a call past ``timeout`` seconds and an
    in-place change of any ``watched`` input (name → tensor) become :class:`MethodOutputError`.
    Its seconds, whatever the outcome, go to the run's ``clock`` (the cost accounting's); its reads
    of the domain's answer to ``reads`` (:mod:`cfcheck.core.answer_reads`)."""
    __tracebackhide__ = True
    watched = dict(watched or {})
    before = {name: t.clone() for name, t in watched.items()}
    started = time.perf_counter()
    try:
        with time_limit(timeout), method_code(reads):
            raw = function(*args, **kwargs)
    except MethodOutputError:
        raise
    except MethodTimeout:
        raise MethodOutputError(
            f"{call} did not return within the per-call timeout of {timeout:g} s "
            "(--cfcheck-timeout, or the profile's timeout)"
        ) from None
    except Exception as error:  # the method's own failure: report it, keep the session alive
        # ``from None``: the report names the exception and where it was raised, without
        # pytest's "During handling of the above exception" chain
        raise MethodOutputError(f"{call} raised {type(error).__name__}: {error}", where=_raise_site(error)) from None
    finally:
        if clock is not None:
            clock.add(time.perf_counter() - started)
    for name, tensor in watched.items():
        if not torch.equal(tensor, before[name]):
            raise MethodOutputError(f"{call} modified its input {name} in place; it must leave {name} unchanged")
    return raw


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`MethodTimeout` in the calling code after ``seconds`` (SIGALRM).

    Python code (loops, ``time.sleep``) is interrupted at once; a single long native
    operation (one big torch kernel) only when it returns. Off the main thread, or where the
    platform has no SIGALRM, the limit is checked after the call returns instead.
    """
    if not seconds or seconds <= 0:
        yield
        return
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        started = time.monotonic()
        yield
        if time.monotonic() - started > seconds:
            raise MethodTimeout()
        return

    def expire(signum: int, frame: Any) -> None:
        raise MethodTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    # another user of the real-time timer (pytest-timeout's signal method) gets it back after
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay > 0:
            remaining = outer_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 1e-3), outer_interval)


class Progress:
    """Items done, rate and ETA of a long generation, written through ``write`` once the work
    has taken longer than :data:`PROGRESS_AFTER_S`."""

    def __init__(self, total: int, write: Callable[[str], None] | None, unit: str = "inputs") -> None:
        self.total, self.write, self.unit = total, write, unit
        self.started = time.monotonic()

    def update(self, done: int) -> None:
        elapsed = time.monotonic() - self.started
        if self.write is None or elapsed <= PROGRESS_AFTER_S or done <= 0:
            return
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        self.write(f"{done}/{self.total} {self.unit} ({rate:.3g}/s, {elapsed:.0f} s, ETA {eta:.0f} s)")


def in_batches(n: int, batch_size: int) -> Iterator[slice]:
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def concatenate(outputs: Sequence[MethodOutput]) -> MethodOutput:
    if not outputs:
        return MethodOutput(torch.empty(0), torch.empty(0, dtype=torch.bool))
    return MethodOutput(torch.cat([o.values for o in outputs]), torch.cat([o.valid for o in outputs]))


def _raise_site(error: BaseException) -> tuple[str, ...]:
    """``file:line in function`` of the innermost frame of ``error``'s traceback and, when that
    frame is library code (the standard library, site-packages, cfcheck's reference models),
    also of the innermost frame outside it: the method's own code. This module's frames are
    left out."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.abspath(f.filename) != _THIS_FILE]
    if not frames:
        return ()
    innermost = frames[-1]
    site = [f"at {_describe_frame(innermost)}"]
    if _is_library(innermost.filename):
        own = next((f for f in reversed(frames) if not _is_library(f.filename)), None)
        if own is not None:
            site.append(f"called from {_describe_frame(own)}")
    return tuple(site)


_THIS_FILE = os.path.abspath(__file__)
_CFCHECK_DIR = os.path.dirname(os.path.dirname(_THIS_FILE)) + os.sep
_LIBRARY_DIRS = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {os.path.dirname(torch.__file__), _CFCHECK_DIR}
    if p
)
_KINDS_DIR = os.path.dirname(_THIS_FILE) + os.sep


def _is_bundled_method(path: str) -> bool:
    """Whether ``path`` (absolute) is a bundled reference method's code: a module of a kind's
    ``methods/`` folder (``cfcheck/kinds/<kind>/methods/``) or the helpers they share."""
    if not path.startswith(_KINDS_DIR):
        return False
    parts = path[len(_KINDS_DIR) :].split(os.sep)
    return (len(parts) > 2 and parts[1] == "methods") or parts == ["method_helpers.py"]


def _is_library(filename: str) -> bool:
    """Whether ``filename`` is library code (cfcheck, torch, the standard library and installed
    packages); cfcheck's bundled methods are a method's own code, like a user's."""
    path = os.path.abspath(filename)
    if filename.startswith("<"):
        return True
    return path.startswith(_LIBRARY_DIRS) and not _is_bundled_method(path)


def _describe_frame(frame: traceback.FrameSummary) -> str:
    path = frame.filename
    try:
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            path = relative
    except ValueError:  # another drive on Windows
        pass
    return f"{path}:{frame.lineno} in {frame.name}"
