"""The structural causal model a domain's :class:`~cfcheck.domains.attributes.Attributes` make.

:class:`AttributeSCM` holds every row of the attribute table and gives the SCM kind what it asks of
a domain: the bin of a value (:meth:`~AttributeSCM.parent_bin`), a do() value in another bin than
the observed one (:meth:`~AttributeSCM.sample_intervention`) and the attributes after an
intervention (:meth:`~AttributeSCM.propagate`: abduction, action, prediction in the graph's order).

Bins: a discrete attribute's bin is its code; a continuous attribute's bins are its declared edges or
its quantile bins over every row of the table (equal quantiles merged). An intervention on a
discrete attribute draws one of the other values uniformly; on a continuous one, one of the other
bins uniformly and then a value uniformly inside it (as the bundled SCM domain does, after Melistas
et al.).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import torch

from cfcheck.domains.attributes import CONTINUOUS, Attributes
from cfcheck.domains.registry import DomainError

__all__ = ["AttributeSCM"]

#: rows of the table the load check runs every mechanism on
CHECK_ROWS = 256


class AttributeSCM:
    """The attributes' SCM over every row of their table (see the module docstring).

    Args:
        attributes: the declaration.
        columns: attribute -> every row of the table (int64 codes, float32 values), checked.

    Raises:
        DomainError: for a discrete value no row holds, or quantile bins that collapse into one.
    """

    def __init__(self, attributes: Attributes, columns: Mapping[str, torch.Tensor]) -> None:
        self.attributes = attributes
        self.columns = dict(columns)
        self.edges: dict[str, torch.Tensor] = {}
        for attribute in attributes.by_name.values():
            column = self.columns[attribute.name]
            if attribute.discrete:
                seen = set(column.unique().tolist())
                unseen = [v for code, v in enumerate(attribute.values) if code not in seen]
                if unseen:
                    raise DomainError(
                        f"attribute {attribute.name!r} ({attribute.kind}): no row of the table holds the value(s) "
                        f"{unseen}; interventions draw among the declared values, so expected each in some row "
                        "(drop it from the values, or add images that have it)"
                    )
            else:
                self.edges[attribute.name] = self._bin_edges(attribute.name, attribute.bins, column)

    @staticmethod
    def _bin_edges(name: str, bins: Any, column: torch.Tensor) -> torch.Tensor:
        if not isinstance(bins, int):
            return torch.tensor(bins, dtype=torch.float32)
        levels = torch.linspace(0, 1, bins + 1, dtype=torch.float64)
        edges = torch.unique_consecutive(torch.quantile(column.double(), levels).float())
        if len(edges) < 3:
            raise DomainError(
                f"continuous attribute {name!r}: its {bins} quantile bins collapse into a single bin (the table's "
                f"values span only {float(column.min()):g}..{float(column.max()):g}, with ties at the quantiles); "
                "interventions move a value to another bin, so expected at least 2: declare explicit edges, or "
                "declare it categorical"
            )
        return edges

    # -- what the SCM kind asks ---------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return self.attributes.names

    def _attribute(self, name: str) -> Any:
        if name not in self.attributes.by_name:
            raise ValueError(f"unknown attribute {name!r}; the domain's attributes are {list(self.names)}")
        return self.attributes.by_name[name]

    def parent_bin(self, name: str, values: torch.Tensor) -> torch.Tensor:
        """The bin (int64) of each value: a discrete attribute's code, a continuous one's bin index."""
        if self._attribute(name).discrete:
            return torch.as_tensor(values).long()
        return torch.bucketize(torch.as_tensor(values).float(), self.edges[name][1:-1], right=True)

    def sample_intervention(
        self, name: str, parents: Mapping[str, torch.Tensor], generator: torch.Generator
    ) -> torch.Tensor:
        """do() values of ``name``, each in another bin than ``parents[name]`` (module docstring)."""
        attribute = self._attribute(name)
        current = torch.as_tensor(parents[name])
        n = len(current)
        if attribute.discrete:
            count = len(attribute.values)
            return (current.long() + torch.randint(1, count, (n,), generator=generator)) % count
        edges = self.edges[name]
        count = len(edges) - 1
        chosen = (self.parent_bin(name, current) + torch.randint(1, count, (n,), generator=generator)) % count
        low, high = edges[chosen], edges[chosen + 1]
        drawn = low + (high - low) * torch.rand(n, generator=generator)
        return torch.minimum(drawn, torch.nextafter(high, low))  # float rounding must not reach the next bin

    def _coerce(self, name: str, value: Any, n: int) -> torch.Tensor:
        attribute = self._attribute(name)
        tensor = torch.as_tensor(value).detach().cpu()
        if tensor.ndim == 2 and tensor.shape[1] == 1:
            tensor = tensor[:, 0]
        if tensor.shape != (n,):
            raise ValueError(f"attribute {name!r}: expected {n} values (shape ({n},)), got shape {tuple(tensor.shape)}")
        if not bool(torch.isfinite(tensor.double()).all()):
            raise ValueError(f"attribute {name!r}: expected finite values, got {tensor.tolist()[:5]}")
        if attribute.kind == CONTINUOUS:
            return tensor.float()
        if tensor.is_floating_point() and not torch.equal(tensor, tensor.round()):
            raise ValueError(
                f"attribute {name!r} ({attribute.kind}): expected integer codes, got {tensor.tolist()[:5]}"
            )
        codes = tensor.long()
        if n and (int(codes.min()) < 0 or int(codes.max()) >= len(attribute.values)):
            raise ValueError(
                f"attribute {name!r} ({attribute.kind}): expected codes in [0, {len(attribute.values) - 1}] "
                f"(the index of the value in {list(attribute.values)}), got {int(codes.min())}..{int(codes.max())}"
            )
        return codes

    @torch.no_grad()
    def propagate(
        self, parents: Mapping[str, torch.Tensor], intervention: Mapping[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Every attribute after ``intervention``: the intervened ones set, their descendants predicted
        by their mechanisms from the noise abducted under the observed values, in the graph's order;
        the others (non-descendants) unchanged. A row whose parents all keep their observed values
        keeps its observed value, so a null intervention changes nothing.

        Args:
            parents: every attribute's observed N values.
            intervention: some attributes' N new values.

        Raises:
            ValueError: for an unknown or malformed attribute, or a mechanism's output that is not N
                values of the attribute's type (naming the attribute).
        """
        missing = [name for name in self.names if name not in parents]
        if missing:
            raise ValueError(f"parents must hold every attribute {list(self.names)}; missing {missing}")
        n = len(torch.as_tensor(parents[self.names[0]]))
        observed = {name: self._coerce(name, parents[name], n) for name in self.names}
        new = {name: value.clone() for name, value in observed.items()}
        changed = {name: torch.zeros(n, dtype=torch.bool) for name in self.names}
        for name, value in intervention.items():
            new[name] = self._coerce(name, value, n)
            changed[name] = new[name] != observed[name]
        graph = self.attributes.graph
        for name in graph.order:
            if name in intervention or not graph.parents(name):
                continue
            rows = torch.stack([changed[p] for p in graph.parents(name)]).any(0).nonzero()[:, 0]
            if not len(rows):
                continue
            mechanism = self.mechanisms[name]
            noise = mechanism.abduct(observed[name][rows], {p: observed[p][rows] for p in graph.parents(name)})
            predicted = mechanism.predict(noise, {p: new[p][rows] for p in graph.parents(name)})
            new[name][rows] = self._coerce(name, predicted, len(rows))
            changed[name] = new[name] != observed[name]
        return new

    @cached_property
    def mechanisms(self) -> dict[str, Any]:
        """Attribute -> its mechanism: the user's, else the one cfcheck fits to the table (fitted on
        first use, then read from the disk cache)."""
        from cfcheck.domains.attributes_mechanisms import fit_mechanisms

        return {**fit_mechanisms(self.attributes, self.columns), **self.attributes.mechanisms}

    def problems(self) -> list[str]:
        """What the load check finds (one line each, empty: none): a mechanism that cannot be fitted,
        raises, or does not give back the observed values of the table's first rows under their
        observed parents (``predict(abduct(v, pa), pa) == v``; continuous values within 1e-3 of the
        column's spread)."""
        try:
            mechanisms = self.mechanisms
        except Exception as error:  # noqa: BLE001 - reported, not raised
            return [f"attribute mechanisms could not be fitted to the table: {type(error).__name__}: {error}"]
        found = []
        rows = torch.arange(min(CHECK_ROWS, len(self.columns[self.names[0]])))
        for name, mechanism in mechanisms.items():
            values = self.columns[name][rows]
            parents = {p: self.columns[p][rows] for p in self.attributes.graph.parents(name)}
            try:
                back = self._coerce(name, mechanism.predict(mechanism.abduct(values, parents), parents), len(rows))
            except Exception as error:  # noqa: BLE001 - the user's code: reported, not raised
                found.append(
                    f"the mechanism of attribute {name!r} fails on the table's first rows: {type(error).__name__}: {error}"
                )
                continue
            if self._attribute(name).kind == CONTINUOUS:
                tolerance = 1e-3 * (float(self.columns[name].std()) + 1e-6)
                worst = int((back - values).abs().argmax())
                if float((back - values).abs().max()) > tolerance:
                    found.append(
                        f"the mechanism of attribute {name!r} does not give back the observed values under the observed "
                        f"parents: predict(abduct(v, pa), pa) is {float(back[worst]):g} for {float(values[worst]):g} in "
                        f"row {worst}; expected abduct and predict to be inverse (within {tolerance:.3g})"
                    )
            elif not torch.equal(back, values):
                worst = int((back != values).nonzero()[0, 0])
                found.append(
                    f"the mechanism of attribute {name!r} does not give back the observed values under the observed "
                    f"parents: predict(abduct(v, pa), pa) is {int(back[worst])} for {int(values[worst])} in row "
                    f"{worst}; expected abduct and predict to be inverse"
                )
        return found


def bind_attributes(attributes: Attributes, data: Any) -> tuple[dict[int, dict[str, torch.Tensor]], AttributeSCM]:
    """Read the attribute table of every source of a domain's ``data`` and make their SCM.

    Args:
        attributes: the declaration.
        data: one source, or a mapping of sources (then ``attributes.table`` maps the same keys to tables).

    Returns:
        ``id(source)`` -> that source's columns (row i: image i), and the SCM over all of their rows.

    Raises:
        DomainError: naming the table, attribute and row (:func:`~cfcheck.domains.attributes_table.read_columns`).
    """
    from cfcheck.domains.attributes_table import read_columns

    if isinstance(data, Mapping):
        table = attributes.table
        if not isinstance(table, Mapping) or set(table) != set(data):
            found = sorted(table) if isinstance(table, Mapping) else repr(table)
            raise DomainError(
                f"attributes: the domain's data is a mapping of sources {sorted(data)}; expected its attribute "
                f"table as a mapping of the same keys, one table per source, got {found}"
            )
        pairs = [(data[key], table[key]) for key in data]
    else:
        pairs = [(data, attributes.table)]
    declared = list(attributes.by_name.values())
    rows = {
        id(source): read_columns(declared, table, source, id_column=attributes.id_column) for source, table in pairs
    }
    columns = {name: torch.cat([part[name] for part in rows.values()]) for name in attributes.names}
    return rows, AttributeSCM(attributes, columns)


#: the model roles that read the attributes (their store entries name what each model reads)
READING_ROLES = ("anticausal_predictors",)


def reading_role_problems(names: tuple[str, ...], model_roles: Mapping[str, Any], store: Any) -> list[str]:
    """What the load check finds in the store entries of the models that read the attributes (one
    line each): each anti-causal predictor's entry must name what it reads, ``attribute='<name>'``
    or ``attributes=[...]`` (a multi-head model's dict of readings), and only declared attributes.

    Args:
        names: the declared attributes (empty: the domain declares none).
        model_roles: the domain's role map.
        store: its model store (an entry it does not hold is the store check's problem, not this one's).
    """
    found = []
    for role in READING_ROLES:
        for model in model_roles.get(role, ()):
            try:
                entry = store.entry(model)
            except Exception:  # noqa: BLE001 - a model the store lacks is reported by the store's own check
                continue
            single, several = entry.get("attribute"), entry.get("attributes")
            read = [single] if single is not None else list(several) if isinstance(several, (list, tuple)) else []
            if not read:
                found.append(
                    f"model {model!r} ({role}): its store entry names no attribute it reads; expected "
                    "attribute='<name>' or attributes=[...] (ModelStore.add(..., attribute=...), ModuleStore(..., "
                    f"{model}={{'attribute': ...}}))"
                )
                continue
            unknown = [str(a) for a in read if a not in names]
            if unknown:
                declared = (
                    f"the declared attributes are {list(names)}" if names else "the domain declares no attributes"
                )
                found.append(f"model {model!r} ({role}) reads {unknown}, which the domain does not declare; {declared}")
    return found
