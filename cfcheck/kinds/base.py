"""What every method kind provides to the one generic engine.

A :class:`KindSpec` says, for one kind: which bundled domains it has suites for, how it builds
tasks from a domain and the profile, how it calls the method on a task's inputs and checks the
output, and which result object its suites score. The session, the plugin, the cache and the
scorecard only ever talk to this interface, so a new kind adds a folder, not branches.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, cast

import torch

from cfcheck.core.costs import MethodClock
from cfcheck.kinds.calling import MethodOutput, OutputSpec, Progress, check_output, concatenate, in_batches, invoke
from cfcheck.kinds.declaration import KindDeclaration
from cfcheck.kinds.protocols import MethodKind, accepts_generator, names_parameter

if TYPE_CHECKING:
    import pytest

    from cfcheck.domains.base import Domain
    from cfcheck.models.zoo import ModelZoo

T = TypeVar("T")  # what a memo holds


class RunProfile(Protocol):
    """What a kind reads of the run's profile (:class:`cfcheck.profiles.Profile`): its name, its
    section for the kind, and how the method is called (inputs per call, seconds per call)."""

    @property
    def name(self) -> str: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def determinism_batch(self) -> int: ...
    def section(self, kind: str) -> Any: ...  # each kind's own section type


class Run(Protocol):
    """What a kind may use of the session: domains, models, profile, seeds and a memo."""

    device: torch.device
    seed: int
    #: the seconds spent inside the method's calls (the run's cost accounting reads it)
    method_clock: MethodClock

    @property
    def profile(self) -> RunProfile: ...
    @property
    def seeds(self) -> tuple[int, ...]: ...
    def domain(self, name: str) -> Domain: ...
    def domain_names(self) -> tuple[str, ...]: ...
    def zoo(self, domain: Domain) -> ModelZoo: ...
    def memo(self, key: tuple[Hashable, ...], factory: Callable[[], T]) -> T: ...


@dataclass(frozen=True, kw_only=True)
class Task:
    """One unit of generation: the method's outputs for one set of inputs.

    ``domain`` is the domain object itself, resolved once per run (records, ids and cache keys use
    its name, :attr:`domain_name`, which is also what tasks compare and hash by: a domain object
    need not be hashable). ``id`` names the task inside its kind and domain (records, pytest ids);
    ``needs`` are tasks whose outputs its tests also score, kept on the same pytest-xdist worker by
    :attr:`group`.
    """

    kind: ClassVar[str]
    domain: Domain = field(compare=False, repr=False)
    seed: int
    needs: tuple[Task, ...] = ()
    domain_name: str = field(init=False)

    def __post_init__(self) -> None:
        name = getattr(self.domain, "name", None) if not isinstance(self.domain, str) else None
        if not isinstance(name, str):
            raise TypeError(
                f"{type(self).__name__}.domain must be a domain object (with a str `name`), got "
                f"{self.domain!r}: pass run.domain(name), not the name"
            )
        object.__setattr__(self, "domain_name", name)

    @property
    def id(self) -> str:
        """The task's name within its kind and domain; each kind's task type defines it."""
        raise TypeError(f"{type(self).__name__} must define the `id` property (e.g. 'cnn/ideal/seed0')")

    @property
    def group(self) -> str:
        """The xdist group: the task a dependent task needs, so both are generated on one worker."""
        anchor = self.needs[0] if self.needs else self
        return f"{self.kind}/{self.domain_name}/{anchor.id}"

    def identity(self) -> dict[str, str | int]:
        """The fields that define the task (for cache keys), without its dependencies; the domain
        by its name."""
        fields = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("needs", "domain", "domain_name")
        }
        return {"kind": self.kind, "domain": self.domain_name, **fields}


@dataclass(frozen=True)
class Inputs:
    """A task's inputs: the tensors the method receives (``arguments``), plus labels per input
    for the per-sample CSV (``labels``: name → N values)."""

    like: torch.Tensor  # the tensor the output is shaped after (N×…)
    arguments: Mapping[str, Any]
    labels: Mapping[str, torch.Tensor]

    def __len__(self) -> int:
        return int(self.like.shape[0])

    def tensor(self, name: str) -> torch.Tensor:
        """The argument ``name``, which must be a tensor."""
        value = self.arguments[name]
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"argument {name!r} is a {type(value).__name__}, not a tensor")
        return value

    def tensors(self) -> list[torch.Tensor]:
        """Every tensor the method receives, in a fixed order (hashed into the cache key)."""
        return [tensor for _, tensor in sorted(watched_tensors(self.arguments).items())]


class KindResult(Protocol):
    """What every kind's result object offers the engine and the suites shared between kinds:
    its task, the method's validity mask (N bools, False where it abstained), the per-input labels
    of the per-sample CSV and the seconds its generation took."""

    @property
    def task(self) -> Task: ...
    @property
    def valid(self) -> torch.Tensor: ...
    @property
    def sample_labels(self) -> dict[str, list[Any]]: ...
    @property
    def seconds(self) -> float: ...


class CounterfactualResult(KindResult, Protocol):
    """A result of counterfactual inputs (:mod:`cfcheck.kinds.ground_truth` scores it): the inputs
    ``x``, the first counterfactual of each ``x_cf`` (the same shape) and, where the domain can
    compute it, the true counterfactual ``true_cf`` (None where it cannot)."""

    @property
    def x(self) -> torch.Tensor: ...
    @property
    def x_cf(self) -> torch.Tensor: ...
    @property
    def true_cf(self) -> torch.Tensor | None: ...


class RunSession(Run, Protocol):
    """What the engine's own suites and the contract (:mod:`cfcheck.kinds.contract`) use of the session
    beyond :class:`Run`: the domains a kind has suites on, the domain a method is built for by default,
    the tasks' outputs (generated once) and the suites' follow-up calls of the method."""

    def domains_for(self, kind: MethodKind | str, *, usable_only: bool = True) -> tuple[list[Domain], str | None]: ...
    def default_method_domain(self) -> str | None: ...
    def outputs(
        self, task: Task, method: object, progress: Callable[[str], None] | None = None, *, requester: str | None = None
    ) -> KindResult: ...
    def cached_call(self, task: Task, method: object, inputs: Inputs) -> MethodOutput: ...
    def add_example_columns(self, task: Task, columns: dict[str, torch.Tensor]) -> None: ...


#: a kind's task type and result type (:class:`KindSpec` is generic in both)
TaskT = TypeVar("TaskT", bound=Task)
ResultT = TypeVar("ResultT", bound=KindResult)


def slice_arguments(value: Any, part: slice | torch.Tensor, device: torch.device) -> Any:
    """The batch ``part`` of an argument: tensors (and dicts of tensors) are sliced and moved;
    models and other objects pass through."""
    if isinstance(value, torch.Tensor):
        return value[part].to(device)
    if isinstance(value, Mapping):
        return {k: slice_arguments(v, part, device) for k, v in value.items()}
    return value


class KindSpec(ABC, Generic[TaskT, ResultT]):
    """One method kind's part of the engine (see the module docstring), generic in the kind's task
    type ``TaskT`` and result type ``ResultT``. A subclass sets :attr:`declaration` (what the kind
    declares in its folder); :attr:`kind` follows from it."""

    #: what the kind declares in its folder's ``declaration.py``
    declaration: ClassVar[KindDeclaration]
    kind: ClassVar[MethodKind]
    #: what a task without outputs lacks, for failure messages
    output_noun: ClassVar[str] = "outputs"
    #: what the first part of a task id names (scorecard summaries group by it)
    task_group_label: ClassVar[str] = "task"
    output: ClassVar[OutputSpec]
    #: the suites of this kind that are not built yet → why (skipped with that reason)
    pending_suites: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declaration = cls.__dict__.get("declaration")
        if declaration is not None:
            cls.kind = MethodKind(declaration.name)

    @abstractmethod
    def supports(self, domain: Domain) -> str | None:
        """None when the kind has suites for ``domain``; otherwise the reason it has not."""

    @abstractmethod
    def tasks(self, run: Run, domain: Domain, which: str) -> list[TaskT]:
        """The tasks a suite marked ``cfcheck_tasks(which)`` runs on ``domain``."""

    @abstractmethod
    def inputs(self, run: Run, task: TaskT) -> Inputs:
        """The inputs of ``task`` (deterministic in the task; memoised by the caller)."""

    @abstractmethod
    def arguments(self, run: Run, task: TaskT, batch: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional arguments of one call, from one batch of the inputs' arguments."""

    @abstractmethod
    def result(self, run: Run, task: TaskT, inputs: Inputs, output: MethodOutput, seconds: float) -> ResultT:
        """The object the kind's suites score."""

    @property
    def call_and_rng(self) -> tuple[str, str]:
        """The method's name and the keyword of cfcheck's seeded RNG (as the kind declares them)."""
        return self.declaration.call, self.declaration.rng_keyword

    def contract_index(self, inputs: Inputs, k: int) -> torch.Tensor:
        """Which inputs the contract suite calls the method on (default: the first ``3k``)."""
        return torch.arange(min(len(inputs), max(k, 1) * 3))

    def examples(self, run: Run, result: ResultT, k: int) -> dict[str, torch.Tensor]:
        """Columns of the task's example grid for its first ``k`` inputs (name → k×C×H×W);
        empty when the kind shows none."""
        return {}

    def call_keywords(self, run: Run, task: TaskT) -> dict[str, Any]:
        """Facts of the task a method may want (keyword → value), passed to a method whose call
        names the keyword explicitly (never through ``**kwargs``); none by default."""
        return {}

    def oracle_arguments(self, run: Run, task: TaskT) -> dict[str, Any]:
        """Knowledge only an oracle control may use (keyword → value), passed to a method whose
        call names the keyword explicitly (never through ``**kwargs``); none by default."""
        return {}

    def check(self, run: Run, domain: Domain) -> None:
        """Raise ValueError when the profile asks for something ``domain`` does not have."""

    def size_problems(self, run: Run, domain: Domain) -> list[str]:
        """What the run's profile needs of ``domain``'s split sizes that it lacks, each naming the split,
        the class, the sizes needed and held, and what to change (none by default). A domain with such
        a problem fails its load check and is not scored."""
        return []

    def size_warnings(self, run: Run, domain: Domain) -> list[str]:
        """What the run's profile needs of ``domain``'s split sizes for some scores only, each naming
        the split, the sizes needed and held, and what to change (none by default). The load check
        warns of them; the domain is still scored, and the scores that need them are skipped with
        the reason."""
        return []

    def provenance(self, run: Run, domain: Domain) -> dict[str, Any]:
        """Facts about the tasks on ``domain`` that the scorecard should record."""
        return {}

    def parametrize(self, metafunc: pytest.Metafunc, run: Run, domains: list[Domain]) -> None:
        """Parametrise ``cfcheck_task`` (and whatever else the kind's suites ask for)."""
        if "cfcheck_task" not in metafunc.fixturenames:
            return
        marker = metafunc.definition.get_closest_marker("cfcheck_tasks")
        which = marker.args[0] if marker else "explained"
        tasks = [task for domain in domains for task in self.tasks(run, domain, which)]
        metafunc.parametrize("cfcheck_task", [task_param(task, len(domains) > 1) for task in tasks])

    def generate(
        self, run: Run, task: TaskT, method: Any, inputs: Inputs, write: Callable[[str], None] | None
    ) -> MethodOutput:
        """Call the method on all inputs of ``task`` in batches, checking every output."""
        __tracebackhide__ = True
        name, rng_keyword = self.call_and_rng
        function = getattr(method, name)
        kwargs: dict[str, Any] = {}
        if accepts_generator(function, rng_keyword):
            kwargs[rng_keyword] = torch.Generator(device=run.device).manual_seed(task.seed)
        offered = {**self.call_keywords(run, task), **self.oracle_arguments(run, task)}
        kwargs.update({keyword: value for keyword, value in offered.items() if names_parameter(function, keyword)})
        progress = Progress(len(inputs), write, unit=f"inputs ({self.output_noun})")
        outputs = []
        for part in in_batches(len(inputs), method_batch_size(method, run.profile.batch_size)):
            batch = {k: slice_arguments(v, part, run.device) for k, v in inputs.arguments.items()}
            args = self.arguments(run, task, batch)
            raw = invoke(
                name,
                function,
                args,
                kwargs,
                watched=watched_tensors(batch),
                timeout=run.profile.timeout,
                clock=run.method_clock,
                reads=getattr(run, "answer_reads", None),  # what the method reads of the domain's answer
            )
            outputs.append(check_output(raw, inputs.like[part].to(run.device), self.output))
            progress.update(part.stop)
        return concatenate(outputs)


def method_batch_size(method: Any, default: int) -> int:
    """Inputs per call: the method's own ``cfcheck_batch_size`` where it declares one (a slow
    method asks for smaller calls, so progress is reported within a task), else the profile's."""
    size = getattr(method, "cfcheck_batch_size", None)
    if size is None:
        return default
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{type(method).__name__}.cfcheck_batch_size must be a positive int, got {size!r}")
    return size


def watched_tensors(batch: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The tensors of one call's arguments by name (``parents['digit']`` inside a dict), for
    the in-place-modification check."""
    found: dict[str, torch.Tensor] = {}
    for name, value in batch.items():
        if isinstance(value, torch.Tensor):
            found[name] = value
        elif isinstance(value, Mapping):
            found.update({f"{name}[{k!r}]": v for k, v in value.items() if isinstance(v, torch.Tensor)})
    return found


class EvaluatedOnce:
    """A result's memo of what the evaluation computes on it once and several tests read (the
    counterfactuals' embedding, the realism reference rendered for them, ...)."""

    def evaluated(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` on the first call with ``name``, the same object after; ``name`` must say
        what ``compute`` computes."""
        memo: dict[str, Any] = self.__dict__.setdefault("_evaluations", {})
        if name not in memo:
            memo[name] = compute()
        return cast(T, memo[name])


def labels_where(labels: Mapping[str, Sequence[Any]], mask: torch.Tensor) -> dict[str, list[Any]]:
    """The per-input labels (a result's ``sample_labels``) of the inputs where ``mask`` is True, for
    scores computed on a subset (e.g. without abstentions)."""
    flags = [bool(m) for m in mask.tolist()]
    return {name: [v for v, keep in zip(values, flags) if keep] for name, values in labels.items()}


def task_param(task: Task, with_domain: bool) -> Any:
    """A pytest parameter for ``task``, in the xdist group of the task it depends on."""
    import pytest

    label = f"{task.domain_name}/{task.id}" if with_domain else task.id
    return pytest.param(task, id=label.replace("/", "-"), marks=pytest.mark.xdist_group(task.group))
