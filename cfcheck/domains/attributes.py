"""A user's domain declares its attributes, the causal graph over them and their mechanisms.

An :class:`Attributes` declaration is what turns a domain of labelled images
(:class:`cfcheck.domains.data.ImageDomain`) into a structural causal model the SCM kind can
intervene on: a per-image attribute table (arrays, a CSV or an ``.npz``,
:mod:`cfcheck.domains.attributes_table`), each attribute's type, a DAG of which attributes cause
which, and the mechanisms that propagate an intervention to the intervened attribute's descendants
(the user's own or fitted by cfcheck, :mod:`cfcheck.domains.attributes_mechanisms`).

Types and how their values are held (every tensor cfcheck hands over, one value per image):

* :func:`binary` — int64 0 or 1 (a table may say 0/1, true/false or yes/no);
* :func:`categorical` — int64 index of the value in the declared ``values`` (``count=k``: 0..k-1);
* :func:`continuous` — float32; its ``bins`` (``n`` quantile bins of the table, or explicit edges)
  are what an intervention moves a value between (Melistas et al. draw each do() value in another
  of ten bins).

Example:
    >>> from cfcheck.domains.attributes import Attributes, binary, categorical, continuous
    >>> attributes = Attributes(
    ...     [continuous("age", bins=5), categorical("site", values=("A", "B", "C")), binary("smiling")],
    ...     graph={"smiling": ("age", "site")},  # child: its parents; the others are roots
    ...     table="faces/attributes.csv",  # a column per attribute and a "file" column
    ... )
    >>> attributes.graph.order
    ('age', 'site', 'smiling')
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

from cfcheck.domains.registry import DomainError

__all__ = [
    "BINARY",
    "CATEGORICAL",
    "CONTINUOUS",
    "Attribute",
    "AttributeMechanism",
    "Attributes",
    "CausalGraph",
    "Mechanism",
    "binary",
    "categorical",
    "continuous",
]

BINARY, CATEGORICAL, CONTINUOUS = "binary", "categorical", "continuous"
#: quantile bins of a continuous attribute when none are declared (Melistas et al.'s ten)
DEFAULT_BINS = 10


@dataclass(frozen=True)
class Attribute:
    """One declared attribute (build it with :func:`binary`, :func:`categorical` or :func:`continuous`).

    Attributes:
        name: the attribute's name (its column in the table, its key in every parents dict).
        kind: ``"binary"``, ``"categorical"`` or ``"continuous"``.
        values: a discrete attribute's values, in code order (binary: ``(0, 1)``); empty for a
            continuous one.
        bins: a continuous attribute's bins: an int (that many quantile bins of the table) or the
            bin edges, increasing, the first and last bounding the values interventions draw.
    """

    name: str
    kind: str
    values: tuple[Any, ...] = ()
    bins: int | tuple[float, ...] | None = None

    @property
    def discrete(self) -> bool:
        """Binary or categorical: held as int64 codes."""
        return self.kind != CONTINUOUS


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise DomainError(f"an attribute's name must be a non-empty string, got {name!r}")
    return name


def binary(name: str) -> Attribute:
    """A binary attribute (0 or 1; a table may also say true/false or yes/no)."""
    return Attribute(_check_name(name), BINARY, (0, 1))


def categorical(name: str, values: Sequence[Any] | None = None, *, count: int | None = None) -> Attribute:
    """A categorical attribute: its ``values`` (held as their index) or a ``count`` of values 0..count-1.

    Raises:
        DomainError: naming the attribute, for neither or both of ``values`` and ``count``, fewer
            than two values, or a value given twice.
    """
    _check_name(name)
    if (values is None) == (count is None):
        raise DomainError(f"categorical attribute {name!r}: give either values=[...] or count=k, not both or neither")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise DomainError(f"categorical attribute {name!r}: count must be an int >= 2, got {count!r}")
        values = range(count)
    found = tuple(values)  # type: ignore[arg-type]  # not None here
    if len(found) < 2:
        raise DomainError(f"categorical attribute {name!r}: expected at least 2 values, got {list(found)}")
    if len(set(found)) != len(found):
        twice = sorted({repr(v) for v in found if found.count(v) > 1})
        raise DomainError(f"categorical attribute {name!r}: values {', '.join(twice)} are given more than once")
    return Attribute(name, CATEGORICAL, found)


def continuous(name: str, bins: int | Sequence[float] = DEFAULT_BINS) -> Attribute:
    """A continuous attribute and the bins interventions move its values between.

    Args:
        name: the attribute's name.
        bins: an int n >= 2 (n quantile bins of the table's values; bins that collapse onto equal
            quantiles are merged) or explicit edges (at least three, finite, strictly increasing: the
            first and last bound the values an intervention draws).

    Raises:
        DomainError: naming the attribute, for bins that leave it a single bin or edges that are not
            finite and increasing.
    """
    _check_name(name)
    if isinstance(bins, int) and not isinstance(bins, bool):
        if bins < 2:
            raise DomainError(
                f"continuous attribute {name!r}: bins={bins} leaves a single bin; interventions move a value "
                "to another bin, so expected at least 2"
            )
        return Attribute(name, CONTINUOUS, (), bins)
    try:
        edges = tuple(float(edge) for edge in bins)  # type: ignore[union-attr]  # not an int here
    except (TypeError, ValueError) as error:
        raise DomainError(
            f"continuous attribute {name!r}: bins must be an int or a sequence of edges, got {bins!r}"
        ) from error
    if len(edges) < 3:
        raise DomainError(
            f"continuous attribute {name!r}: the edges {list(edges)} make {max(len(edges) - 1, 0)} bin(s); "
            "interventions move a value to another bin, so expected at least 3 edges (2 bins)"
        )
    if not all(math.isfinite(e) for e in edges) or any(b <= a for a, b in zip(edges, edges[1:])):
        raise DomainError(
            f"continuous attribute {name!r}: bin edges must be finite and strictly increasing, got {list(edges)}"
        )
    return Attribute(name, CONTINUOUS, (), edges)


@runtime_checkable
class AttributeMechanism(Protocol):
    """The user's own mechanism of one attribute: ``abduct`` infers each image's exogenous noise from
    its observed value and parents, ``predict`` gives the values that noise yields under (new) parents
    (:mod:`cfcheck.domains.attributes_mechanisms` describes the ones cfcheck fits)."""

    def abduct(self, values: torch.Tensor, parents: Mapping[str, torch.Tensor]) -> Any:
        """The exogenous noise of each of N observed ``values`` under their observed ``parents``."""

    def predict(self, noise: Any, parents: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The N values ``noise`` yields under ``parents`` (int64 codes for a discrete attribute)."""


@dataclass(frozen=True)
class Mechanism:
    """A mechanism from two functions: ``Mechanism(abduct=lambda v, pa: ..., predict=lambda u, pa: ...)``."""

    abduct: Callable[[torch.Tensor, Mapping[str, torch.Tensor]], Any]
    predict: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor]


def check_mechanism(name: str, mechanism: object) -> None:
    """Raise a :class:`DomainError` naming ``name`` unless ``mechanism`` has ``abduct`` and ``predict``."""
    if not isinstance(mechanism, AttributeMechanism) or not (
        callable(getattr(mechanism, "abduct", None)) and callable(getattr(mechanism, "predict", None))
    ):
        raise DomainError(
            f"mechanisms: the mechanism of {name!r} must have abduct(values, parents) and predict(noise, parents) "
            f"(an AttributeMechanism, or Mechanism(abduct=..., predict=...)); got {type(mechanism).__name__}"
        )


class CausalGraph:
    """A DAG over the attributes: which attributes cause which.

    Args:
        names: every attribute, in declaration order.
        parents: child -> its parents; an attribute not named as a child is a root.

    Raises:
        DomainError: for an attribute the declaration lacks (child or parent), a parent listed twice,
            or a cycle (naming it: ``a → b → a``).
    """

    def __init__(self, names: Sequence[str], parents: Mapping[str, Sequence[str]]) -> None:
        self.names = tuple(names)
        declared = set(self.names)
        for child, listed in parents.items():
            if isinstance(listed, str):
                raise DomainError(
                    f"causal graph: the parents of {child!r} must be a list of attribute names, got the string {listed!r}"
                )
            unknown = [name for name in (child, *listed) if name not in declared]
            if unknown:
                raise DomainError(
                    f"causal graph: the edge(s) into {child!r} name unknown attribute(s) {unknown}; "
                    f"the declared attributes are {list(self.names)}"
                )
            if len(set(listed)) != len(listed):
                raise DomainError(f"causal graph: {child!r} lists a parent twice: {list(listed)}")
        self._parents = {name: tuple(parents.get(name, ())) for name in self.names}
        cycle = self._cycle()
        if cycle:
            raise DomainError(
                f"causal graph: the cycle {' → '.join(cycle)}; expected a DAG (no attribute may cause itself, "
                "directly or through others)"
            )
        self.order = self._topological_order()

    def parents(self, name: str) -> tuple[str, ...]:
        """The parents of ``name`` (empty for a root), in the order they were declared."""
        return self._parents[name]

    def roots(self) -> tuple[str, ...]:
        """The attributes without parents, in declaration order."""
        return tuple(name for name in self.names if not self._parents[name])

    def children(self, name: str) -> tuple[str, ...]:
        """The attributes ``name`` is a parent of, in declaration order."""
        return tuple(child for child in self.names if name in self._parents[child])

    def descendants(self, name: str) -> frozenset[str]:
        """Every attribute ``name`` causes, directly or through others (not ``name`` itself)."""
        found: set[str] = set()
        frontier = list(self.children(name))
        while frontier:
            child = frontier.pop()
            if child not in found:
                found.add(child)
                frontier += self.children(child)
        return frozenset(found)

    def _cycle(self) -> list[str]:
        """A cycle as a closed path (first name repeated at the end), or [] for a DAG."""
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        path: list[str] = []

        def visit(name: str) -> list[str]:
            state[name] = 1
            path.append(name)
            for parent in self._parents[name]:
                if state.get(parent) == 1:
                    loop = path[path.index(parent) :]
                    return [*reversed(loop), loop[-1]]  # parent → ... → child → parent (cause first)
                if parent not in state and (found := visit(parent)):
                    return found
            path.pop()
            state[name] = 2
            return []

        for name in self.names:
            if name not in state and (found := visit(name)):
                return found
        return []

    def _topological_order(self) -> tuple[str, ...]:
        """Parents before children; among the ready ones, declaration order."""
        placed: list[str] = []
        while len(placed) < len(self.names):
            ready = next(n for n in self.names if n not in placed and all(p in placed for p in self._parents[n]))
            placed.append(ready)
        return tuple(placed)


class Attributes:
    """A domain's attributes: their types, the per-image table, the causal graph and the mechanisms.

    Args:
        attributes: the declarations (:func:`binary`, :func:`categorical`, :func:`continuous`).
        table: one value per image and attribute, aligned with the images: a mapping attribute ->
            1-D array, a ``.csv`` (a column per attribute; for a folder source also ``id_column``,
            each image's path relative to the folder's root) or an ``.npz`` (one array per
            attribute). For a domain whose data is a mapping of sources (``{"train": ..., "test":
            ...}``), a mapping of the same keys to such tables.
        graph: child -> its parents (attributes not named are roots).
        mechanisms: attribute -> the user's own mechanism
            (:class:`AttributeMechanism`) for some or all
            attributes with parents; cfcheck fits the others to the table
            (:func:`~cfcheck.domains.attributes_mechanisms.fit_mechanisms`). Roots need none.
        id_column: the CSV column naming each image of a folder source.
        seed: the seed cfcheck's mechanisms are fitted with.

    Raises:
        DomainError: for no attributes, a name declared twice, an unknown attribute or a cycle in
            the graph, or a mechanism for an unknown attribute or a root.
    """

    def __init__(
        self,
        attributes: Sequence[Attribute],
        *,
        table: Any,
        graph: Mapping[str, Sequence[str]] | None = None,
        mechanisms: Mapping[str, Any] | None = None,
        id_column: str = "file",
        seed: int = 0,
    ) -> None:
        declared = list(attributes)
        if not declared or not all(isinstance(a, Attribute) for a in declared):
            raise DomainError(
                "attributes: expected a non-empty list of binary(...), categorical(...) or continuous(...) "
                f"declarations, got {declared!r}"
            )
        names = [a.name for a in declared]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise DomainError(f"attributes: {twice} declared more than once")
        self.by_name = {a.name: a for a in declared}
        self.graph = CausalGraph(names, dict(graph or {}))
        self.names = tuple(names)
        self.table = (
            table if isinstance(table, Mapping) else os.fspath(table) if isinstance(table, os.PathLike) else table
        )
        self.id_column = id_column
        self.seed = seed
        own = dict(mechanisms or {})
        for name in own:
            if name not in self.by_name:
                raise DomainError(f"mechanisms: {name!r} is not a declared attribute; the attributes are {names}")
            if not self.graph.parents(name):
                raise DomainError(
                    f"mechanisms: {name!r} has no parents in the causal graph, so it needs no mechanism "
                    "(an intervention sets a root; nothing propagates into it)"
                )
            check_mechanism(name, own[name])
        self.mechanisms = own

    @property
    def categorical_names(self) -> tuple[str, ...]:
        """The binary and categorical attributes (held as int64 codes), in declaration order."""
        return tuple(a.name for a in self.by_name.values() if a.discrete)

    def __repr__(self) -> str:
        edges = ", ".join(f"{p}→{c}" for c in self.names for p in self.graph.parents(c))
        kinds = ", ".join(f"{a.name} ({a.kind})" for a in self.by_name.values())
        return f"Attributes({kinds}; graph: {edges or 'no edges'})"
