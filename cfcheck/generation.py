"""Running a visual counterfactual explainer on a task, checking every output it returns.

A method's bad output (wrong shape, NaN, out of range, mutated input, exception) becomes a
:class:`MethodOutputError` stored for that task: the first test that scores the task fails with
the full report (for an exception: its type, message and where the method raised it), every
later test of the task with a one-line pointer to that report, and the rest of the session
goes on.
"""

from __future__ import annotations

import os
import sysconfig
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.kinds import accepts_generator
from cfcheck.tasks import TaskInputs, VCETask

if TYPE_CHECKING:
    from cfcheck.zoo import ModelZoo

RANGE_TOLERANCE = 1e-4


class MethodOutputError(Exception):
    """The method under test returned something cfcheck cannot score, or raised.

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

    def for_task(self, task_id: str, requester: str | None = None) -> MethodOutputError:
        """The error a test of ``task_id`` fails with: the full report for the first test that
        asks (``requester``, a pytest node id), a one-line pointer to it for every later one."""
        reason = f"no counterfactuals: {self.summary}"
        if not self.reported:
            self.reported, self.reported_in = True, requester
            return MethodOutputError(f"{task_id}: no counterfactuals: {self.message}", where=self.where, summary=reason)
        first_line = (self.message.splitlines() or [""])[0]
        pointer = self.reported_in or "the first failing test of this task"
        return MethodOutputError(
            f"{task_id}: no counterfactuals: {first_line} (full report in {pointer})", summary=reason
        )


@dataclass(frozen=True)
class MethodOutput:
    cfs: torch.Tensor  # N×K×C×H×W (K counterfactuals per input, K=1 for most methods)
    valid: torch.Tensor  # bool N: False where the method abstained


def check_output(raw: Any, x: torch.Tensor) -> MethodOutput:
    """Validate what ``explain`` returned for inputs ``x``; normalise to :class:`MethodOutput`."""
    __tracebackhide__ = True
    valid = None
    if isinstance(raw, tuple):
        if len(raw) != 2:
            raise MethodOutputError(
                f"explain returned a tuple of {len(raw)} items; expected x_cf or (x_cf, valid_mask)"
            )
        raw, valid = raw
    if not isinstance(raw, torch.Tensor):
        raise MethodOutputError(f"explain returned {type(raw).__name__}; expected a torch.Tensor")
    if raw.shape == x.shape:
        cfs = raw.unsqueeze(1)
    elif raw.ndim == x.ndim + 1 and raw.shape[0] == x.shape[0] and raw.shape[2:] == x.shape[1:]:
        cfs = raw
    else:
        raise MethodOutputError(
            f"explain returned shape {tuple(raw.shape)}; expected {tuple(x.shape)} "
            f"(one counterfactual per input) or (N, K, {', '.join(map(str, x.shape[1:]))})"
        )
    if raw.dtype != torch.float32:
        raise MethodOutputError(f"explain returned dtype {raw.dtype}; expected torch.float32")
    if raw.device != x.device:
        raise MethodOutputError(f"explain returned a tensor on {raw.device}; the inputs were on {x.device}")
    finite = torch.isfinite(cfs)
    if not bool(finite.all()):
        bad = int((~finite).flatten(1).any(1).sum())
        raise MethodOutputError(f"explain returned NaN or Inf values for {bad} of {len(x)} inputs")
    low, high = float(cfs.min()), float(cfs.max())
    if low < -RANGE_TOLERANCE or high > 1 + RANGE_TOLERANCE:
        raise MethodOutputError(f"explain returned values in [{low:.4g}, {high:.4g}]; images must lie in [0, 1]")
    if valid is None:
        valid = torch.ones(len(x), dtype=torch.bool, device=x.device)
    if not isinstance(valid, torch.Tensor) or valid.dtype != torch.bool or valid.shape != (len(x),):
        described = f"{valid.dtype} {tuple(valid.shape)}" if isinstance(valid, torch.Tensor) else type(valid).__name__
        raise MethodOutputError(f"the validity mask must be a bool tensor of shape ({len(x)},); got {described}")
    return MethodOutput(cfs.detach().clamp(0, 1).cpu(), valid.detach().cpu())


def call_method(
    method: Any,
    x: torch.Tensor,
    target: torch.Tensor,
    classifier: torch.nn.Module,
    generator: torch.Generator,
) -> MethodOutput:
    """One call of ``explain``, with the input-mutation check and the output checks."""
    __tracebackhide__ = True
    before = x.clone()
    kwargs = {"generator": generator} if accepts_generator(method.explain) else {}
    try:
        raw = method.explain(x, target, classifier, **kwargs)
    except MethodOutputError:
        raise
    except Exception as error:  # the method's own failure: report it, keep the session alive
        # ``from None``: the report names the exception and where it was raised, without
        # pytest's "During handling of the above exception" chain
        where = _raise_site(error)
        raise MethodOutputError(f"explain raised {type(error).__name__}: {error}", where=where) from None
    if not torch.equal(x, before):
        raise MethodOutputError("explain modified its input x in place; it must leave x unchanged")
    return check_output(raw, x)


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
_CFCHECK_DIR = os.path.dirname(_THIS_FILE) + os.sep
_LIBRARY_DIRS = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {os.path.dirname(torch.__file__), _CFCHECK_DIR}
    if p
)
#: cfcheck's bundled methods are a method's own code, like a user's
_BUNDLED_METHODS_DIR = os.path.join(_CFCHECK_DIR, "methods") + os.sep


def _is_library(filename: str) -> bool:
    path = os.path.abspath(filename)
    if filename.startswith("<"):
        return True
    return path.startswith(_LIBRARY_DIRS) and not path.startswith(_BUNDLED_METHODS_DIR)


def _describe_frame(frame: traceback.FrameSummary) -> str:
    path = frame.filename
    try:
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            path = relative
    except ValueError:  # another drive on Windows
        pass
    return f"{path}:{frame.lineno} in {frame.name}"


def generate(
    method: Any,
    inputs: TaskInputs,
    classifier: torch.nn.Module,
    *,
    device: torch.device,
    seed: int,
    batch_size: int,
    progress: Callable[[str], None] | None = None,
) -> MethodOutput:
    """Explain all task inputs in batches; reports progress when it takes more than a few seconds."""
    generator = torch.Generator(device=device).manual_seed(seed)
    outputs: list[MethodOutput] = []
    started = time.monotonic()
    for start in range(0, len(inputs), batch_size):
        x = inputs.x[start : start + batch_size].to(device)
        target = inputs.target[start : start + batch_size].to(device)
        outputs.append(call_method(method, x, target, classifier, generator))
        elapsed = time.monotonic() - started
        if progress is not None and elapsed > 3.0:
            done = min(start + batch_size, len(inputs))
            progress(f"{done}/{len(inputs)} inputs explained ({elapsed:.0f} s)")
    return MethodOutput(torch.cat([o.cfs for o in outputs]), torch.cat([o.valid for o in outputs]))


@dataclass
class VCEResult:
    """Counterfactuals of one task plus lazily computed, memoised model outputs on them."""

    task: VCETask
    inputs: TaskInputs
    output: MethodOutput
    zoo: ModelZoo
    seconds: float
    _logits: dict[tuple[str, str], torch.Tensor] = field(default_factory=dict, repr=False)

    @property
    def x(self) -> torch.Tensor:
        return self.inputs.x

    @property
    def x_cf(self) -> torch.Tensor:
        """The first counterfactual of every input (what single-CF metrics score)."""
        return self.output.cfs[:, 0]

    @property
    def valid(self) -> torch.Tensor:
        return self.output.valid

    @property
    def target(self) -> torch.Tensor:
        return self.inputs.target

    @property
    def source(self) -> torch.Tensor:
        return self.inputs.source

    @property
    def num_counterfactuals(self) -> int:
        return self.output.cfs.shape[1]

    def logits(self, model: str, on: str = "cf") -> torch.Tensor:
        """Logits of reference model ``model`` on the counterfactuals ("cf") or originals ("x")."""
        if on not in ("cf", "x"):
            raise ValueError(f"on must be 'cf' or 'x', got {on!r}")
        key = (model, on)
        if key not in self._logits:
            self._logits[key] = self.zoo.logits(model, self.x_cf if on == "cf" else self.x)
        return self._logits[key]

    def predictions(self, model: str, on: str = "cf") -> torch.Tensor:
        return self.logits(model, on).argmax(dim=1)

    def probabilities(self, model: str, on: str = "cf") -> torch.Tensor:
        return self.logits(model, on).softmax(dim=1)

    @cached_property
    def sample_labels(self) -> dict[str, list[int]]:
        return {"source": self.source.tolist(), "target": self.target.tolist()}
