"""The registered method kinds: every ``cfcheck.kinds`` entry point of the installed packages.

A kind is a package that registers its :class:`~cfcheck.kinds.declaration.KindDeclaration` in the
``cfcheck.kinds`` entry-point group, ``name = "package.module:DECLARATION"`` (cfcheck's own
``pyproject.toml`` registers vce, scm, latent and attribution there, exactly as another package
registers a kind of its own). The declaration names everything else of the kind. Kinds are listed
by their declared ``order``, then by name (entry points come in no guaranteed order).

Loading the kinds registers each kind's own metric cards into :data:`cfcheck.metrics.cards.CARDS`
and checks every card key a kind declares (:func:`register_kind_cards`), so any process that knows
the kinds (a run, ``cfcheck cards``, the profiles) knows their cards.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from cfcheck.kinds.declaration import KindDeclaration, KindError

if TYPE_CHECKING:
    from cfcheck.metrics.card import MetricCard

__all__ = [
    "DECLARATIONS",
    "ENTRY_POINT_GROUP",
    "declarations",
    "kind_cards",
    "kind_fixtures",
    "kind_markers",
    "loaded_cards",
    "register_kind_cards",
    "task_sets",
]

#: the entry-point group installed packages register their kinds in
ENTRY_POINT_GROUP = "cfcheck.kinds"


def _load(point: Any) -> KindDeclaration:
    try:
        declaration = point.load()
    except Exception as error:  # noqa: BLE001 - reported with the entry point's name
        raise KindError(
            f"kind {point.name!r}: its entry point {point.value!r} (group {ENTRY_POINT_GROUP}) failed to import: "
            f"{type(error).__name__}: {error}"
        ) from error
    if not isinstance(declaration, KindDeclaration) or declaration.name != point.name:
        raise KindError(
            f"kind {point.name!r}: its entry point {point.value!r} (group {ENTRY_POINT_GROUP}) must name a "
            f"KindDeclaration (cfcheck.kinds.declaration) called {point.name!r}; got {declaration!r}"
        )
    return declaration


@lru_cache(maxsize=1)
def declarations() -> Mapping[str, KindDeclaration]:
    """Kind name → its declaration, for every ``cfcheck.kinds`` entry point, in the kinds' order.

    Raises:
        KindError: where an entry point fails to load or names no declaration of its name, where
            none is registered (cfcheck's own metadata is missing: reinstall it), or where a kind's
            cards are refused (:func:`register_kind_cards`).
    """
    from importlib.metadata import distributions

    points: dict[str, Any] = {}
    # every distribution on the path, not only the first of each name: a stale copy of a package's
    # metadata (an egg-info left in a checkout) must not hide the kinds its installed copy registers
    for distribution in distributions():
        for point in distribution.entry_points:
            if point.group == ENTRY_POINT_GROUP:
                points.setdefault(point.name, point)  # a kind found twice on the path counts once
    if not points:
        raise KindError(
            f"no method kind is registered (entry-point group {ENTRY_POINT_GROUP}): cfcheck's package "
            "metadata is missing or stale; reinstall it (pip install -e . in a checkout)"
        )
    found = sorted((_load(point) for point in points.values()), key=lambda d: (d.order, d.name))
    register_kind_cards(found)
    return {declaration.name: declaration for declaration in found}


def register_kind_cards(found: Iterable[KindDeclaration]) -> None:
    """Register each kind's own metric cards into :data:`cfcheck.metrics.cards.CARDS`, then check that
    every card key each kind declares has a card.

    Args:
        found: the kinds' declarations.

    Raises:
        KindError: naming the kind: its own cards cannot be reached, clash with a card another owner
            defines (naming both), or it declares a key no card has (with the closest keys).
    """
    from cfcheck.metrics.cards import CARDS, close_cards_hint, note_kinds_loaded, register_cards

    found = list(found)
    for declaration in found:
        owner = f"kind {declaration.name!r}"
        try:
            register_cards(declaration.own_metric_cards(), owner, bundled=_bundled(declaration))
        except (TypeError, ValueError) as error:
            if isinstance(error, KindError):
                raise
            raise KindError(str(error)) from None
    for declaration in found:
        for key in declaration.cards:
            if key not in CARDS:
                raise KindError(
                    f"kind {declaration.name!r} declares the metric card {key!r}, which no card has; "
                    f"{close_cards_hint(key)}"
                )
    note_kinds_loaded()


def _bundled(declaration: KindDeclaration) -> bool:
    """Whether cfcheck itself ships the kind's own cards (a bundled kind's ``own_cards`` module is in
    cfcheck's package), so a scorecard need not carry their definitions."""
    own = declaration.own_cards
    return isinstance(own, str) and own.partition(":")[0].split(".")[0] == "cfcheck"


def loaded_cards() -> Mapping[str, MetricCard]:
    """Every metric card, the kinds' own included: the registry (:data:`cfcheck.metrics.cards.CARDS`)
    once the kinds are loaded. A reader below the kinds takes this from its caller.

    Raises:
        KindError: as :func:`declarations`.
    """
    from cfcheck.metrics.cards import CARDS

    declarations()
    return CARDS


class _Declarations(Mapping[str, KindDeclaration]):
    """:func:`declarations` as a mapping read on each use (so nothing resolves at import time)."""

    def __getitem__(self, name: str) -> KindDeclaration:
        return declarations()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(declarations())

    def __len__(self) -> int:
        return len(declarations())

    def __repr__(self) -> str:
        return f"DECLARATIONS({list(self)})"


#: kind name → its declaration, in the kinds' order (:func:`declarations`)
DECLARATIONS: Mapping[str, KindDeclaration] = _Declarations()


def kind_cards(name: str) -> frozenset[str] | None:
    """The card keys kind ``name`` records (:meth:`KindDeclaration.card_keys`); None for a name no
    kind has (a score without a kind, "-")."""
    declaration = declarations().get(name)
    return frozenset(declaration.card_keys()) if declaration is not None else None


def kind_fixtures() -> tuple[str, ...]:
    """The fixtures the kinds' ``parametrize`` give their suites besides ``cfcheck_task``."""
    return tuple(dict.fromkeys(name for declaration in DECLARATIONS.values() for name in declaration.fixtures))


def kind_markers() -> dict[str, str]:
    """Marker signature → help, of every kind's own markers."""
    return {signature: text for declaration in DECLARATIONS.values() for signature, text in declaration.markers.items()}


def task_sets() -> tuple[str, ...]:
    """Every value ``cfcheck_tasks(which)`` takes in some kind's suites, first-declared first."""
    return tuple(dict.fromkeys(which for declaration in DECLARATIONS.values() for which in declaration.task_sets))
