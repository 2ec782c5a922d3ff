"""Noticing a method that reads the domain's answer: its true counterfactual, or the factors it is
computed from beyond what the kind's call hands the method.

Where a domain computes its answer, it reports the read through :func:`read_answer` (or a
function decorated with :func:`reads_answer`; :func:`cfcheck.domains.answers.guard_answer_methods`
wraps the answer capabilities of every domain a run resolves, a user's too). A read counts only
while the method's own code runs — its adapter's fixture building it, or one of its calls —
and outside :func:`engine_reads`, which the engine sets around its own uses (task construction,
scoring against the true counterfactual). What is read, and how often, goes to the
:class:`AnswerReads` of :func:`method_code`; the run's scorecard then says that the method read
the answer and that the run is not a valid submission.

Example:
    >>> reads = AnswerReads()
    >>> with method_code(reads):
    ...     read_answer("true counterfactual")
    >>> with method_code(reads), engine_reads():
    ...     read_answer("true counterfactual")  # the engine's own use: not counted
    >>> reads.summary()
    {'what': ['true counterfactual'], 'calls': 1}
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:  # torch loads only where a tensor is made or read (the views import this module)
    import torch

__all__ = [
    "ANSWER_MARK",
    "ANSWER_READ_HEADLINE",
    "AnswerReads",
    "answer_read_of",
    "answer_read_sentence",
    "decode_reads",
    "encode_reads",
    "engine_reads",
    "method_code",
    "read_answer",
    "reads_answer",
]

F = TypeVar("F", bound=Callable[..., Any])

#: the scorecard's headline word and the start of its sentence for a run whose method read the answer
ANSWER_READ_HEADLINE = "NOT A VALID SUBMISSION"
#: the attribute :func:`reads_answer` sets on the functions it wraps (a guard wraps a function once)
ANSWER_MARK = "__cfcheck_answer__"

#: True inside the engine's own uses of the answer (per thread and task: a ContextVar)
_ENGINE: ContextVar[bool] = ContextVar("cfcheck_engine_reads", default=False)
#: True inside a read already counted (a capability computed from a lower hooked function)
_INSIDE: ContextVar[bool] = ContextVar("cfcheck_inside_answer", default=False)
#: where reads go while the method's code runs; a plain global, so that a method's own threads
#: (which start with a fresh context) are seen too
_collectors: list[AnswerReads] = []


class AnswerReads:
    """What a method read of the domain's answer: what → how many reads.

    ``collecting()`` opens a nested counter that also receives every read while open (the
    session keeps one per generated task, stored with its outputs in the generation cache).
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._open: list[Counter[str]] = []

    def record(self, what: str, calls: int = 1) -> None:
        """Count ``calls`` reads of ``what``."""
        self.counts[what] += calls
        for counter in self._open:
            counter[what] += calls

    def merge(self, counts: Mapping[str, int]) -> None:
        """Add reads counted elsewhere (a cached task's, an xdist worker's)."""
        for what, calls in counts.items():
            self.record(str(what), int(calls))

    @contextmanager
    def collecting(self) -> Iterator[Counter[str]]:
        """A counter of the reads made while the block runs (they count here as well)."""
        counter: Counter[str] = Counter()
        self._open.append(counter)
        try:
            yield counter
        finally:
            self._open.remove(counter)

    def summary(self) -> dict[str, Any] | None:
        """``{"what": [...], "calls": N}`` for the scorecard's provenance, or None: nothing read."""
        if not self.counts:
            return None
        return {"what": sorted(self.counts), "calls": int(sum(self.counts.values()))}

    def serialize(self) -> str:
        """The counts as JSON (what an xdist worker hands the controller)."""
        return json.dumps(dict(self.counts), sort_keys=True)


def read_answer(what: str) -> None:
    """Count one read of the domain's answer (``what``: which function or data) where the method's
    code reads it; the engine's own reads and reads outside the method's code are not counted."""
    if _ENGINE.get() or _INSIDE.get():
        return
    for collector in list(_collectors):
        collector.record(what)


def reads_answer(what: str) -> Callable[[F], F]:
    """Decorate a function that computes (part of) the domain's answer: each call that returns is one
    read of ``what`` (:func:`read_answer`); the hooked functions it calls in turn are not counted again."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def hooked(*args: Any, **kwargs: Any) -> Any:
            token = _INSIDE.set(True)
            try:
                value = function(*args, **kwargs)
            finally:
                _INSIDE.reset(token)
            read_answer(what)
            return value

        setattr(hooked, ANSWER_MARK, what)
        return cast(F, hooked)

    return decorate


@contextmanager
def engine_reads() -> Iterator[None]:
    """The engine's own use of the answer (building tasks, scoring): reads inside are not the method's."""
    token = _ENGINE.set(True)
    try:
        yield
    finally:
        _ENGINE.reset(token)


@contextmanager
def method_code(reads: AnswerReads | None) -> Iterator[None]:
    """The method's own code runs in the block (its fixture, one of its calls): every read of the
    answer made inside goes to ``reads`` (None: counted nowhere), even where the engine called it
    from one of its own uses."""
    if reads is None:
        yield
        return
    engine, inside = _ENGINE.set(False), _INSIDE.set(False)
    _collectors.append(reads)
    try:
        yield
    finally:
        _collectors.remove(reads)
        _INSIDE.reset(inside)
        _ENGINE.reset(engine)


def encode_reads(counts: Mapping[str, int]) -> torch.Tensor:
    """``counts`` as a uint8 tensor of their JSON (kept with a task's outputs in the generation cache)."""
    import torch

    data = json.dumps(dict(counts), sort_keys=True).encode()
    return torch.tensor(list(data), dtype=torch.uint8)


def decode_reads(tensor: torch.Tensor) -> dict[str, int]:
    """The counts :func:`encode_reads` stored (an unreadable entry counts as one unnamed read: the
    method's outputs came with a flag, whatever it said)."""
    import torch

    try:
        found = json.loads(bytes(tensor.to(torch.uint8).tolist()).decode())
        return {str(what): int(calls) for what, calls in found.items()}
    except (ValueError, AttributeError, TypeError):
        return {"unreadable record of a cached read": 1}


def answer_read_of(scorecard: Mapping[str, Any]) -> dict[str, Any] | None:
    """The scorecard's ``provenance.answer_read`` (``{"what": [...], "calls": N}``), or None."""
    found = (scorecard.get("provenance") or {}).get("answer_read")
    return dict(found) if isinstance(found, Mapping) and found else None


def answer_read_sentence(read: Mapping[str, Any]) -> str:
    """What the headline says of a run whose method read the answer (after "NOT A VALID SUBMISSION: ")."""
    what = ", ".join(str(w) for w in read.get("what", [])) or "unnamed"
    calls = read.get("calls", 0)
    return f"the method read the domain's true counterfactual or its factors ({what}; {calls} reads)"
