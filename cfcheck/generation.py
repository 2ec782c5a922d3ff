"""Running a visual counterfactual explainer on a task, checking every output it returns.

A method's bad output (wrong shape, NaN, out of range, mutated input, exception) becomes a
:class:`MethodOutputError` stored for that task: every test that scores the task fails with
the same precise message, and the rest of the session goes on.
"""

from __future__ import annotations

import time
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
    """The method under test returned something cfcheck cannot score."""


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
        raise MethodOutputError(f"explain raised {type(error).__name__}: {error}") from error
    if not torch.equal(x, before):
        raise MethodOutputError("explain modified its input x in place; it must leave x unchanged")
    return check_output(raw, x)


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
