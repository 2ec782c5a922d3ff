"""What a method kind declares about itself, torch-free: the object its entry point names.

A kind is a package registered in the ``cfcheck.kinds`` entry-point group (cfcheck's own four
too, in its ``pyproject.toml``); the entry point names a :class:`KindDeclaration`, which
:mod:`cfcheck.kinds.registry` loads. The plugin reads declarations before any model loads
(markers, parametrised fixture names, kind detection, the kind list); everything else of the
kind — its :class:`cfcheck.kinds.base.KindSpec` (with torch), its profile section, its adapter
template, its suites, its bundled adapters and reference methods, its domain calibration and its
views — is named by the declaration as ``"package.module:attribute"`` (or a package), and
reached through one function, :func:`resolve`, when it is first needed.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfcheck.metrics.card import MetricCard

__all__ = [
    "Control",
    "DomainCalibration",
    "Expectation",
    "KindDeclaration",
    "KindError",
    "Option",
    "resolve",
]

#: one command-line option: its flags and :meth:`argparse.ArgumentParser.add_argument`'s keywords
Option = tuple[tuple[str, ...], Mapping[str, Any]]


class KindError(ValueError):
    """A kind's declaration, or something it names, is not what the engine expects."""


def resolve(reference: str, owner: str = "a kind") -> Any:
    """The object ``reference`` names: ``"package.module:attribute"`` (the attribute may be dotted)
    or ``"package.module"`` (the module itself). The one way a kind's parts are reached.

    Args:
        reference: what a declaration names.
        owner: who names it, for the error (``"kind 'vce' (spec)"``).

    Returns:
        The module or the attribute.

    Raises:
        KindError: naming ``owner``, the reference and what failed (the import or the attribute).
    """
    module_name, _, attribute = reference.partition(":")
    if not module_name or (attribute and not all(part.isidentifier() for part in attribute.split("."))):
        raise KindError(f"{owner} names {reference!r}; expected 'package.module' or 'package.module:attribute'")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise KindError(f"{owner} names {reference!r}, whose module cannot be imported: {error}") from error
    for part in attribute.split(".") if attribute else ():
        try:
            found = getattr(found, part)
        except AttributeError:
            raise KindError(f"{owner} names {reference!r}, but {module_name} has no attribute {attribute!r}") from None
    return found


def _check_reference(reference: str, owner: str, *, module_only: bool = False) -> None:
    module_name, colon, attribute = reference.partition(":")
    parts = module_name.split(".")
    if not all(p.isidentifier() for p in parts) or (module_only and colon) or (colon and not attribute):
        shape = "'package.module'" if module_only else "'package.module:attribute' or 'package.module'"
        raise KindError(f"{owner} is {reference!r}; expected {shape}")


class Expectation(str, enum.Enum):
    """What a bundled control exists to show on one suite: that the suite passes it or fails it.

    The value is the sign the calibration files keep (``"+"``, ``"-"``); :attr:`symbol` is the one
    the tables print (a Unicode minus)."""

    PASS = "+"
    FAIL = "-"

    def __str__(self) -> str:
        return str(self.value)

    def __hash__(self) -> int:  # as its sign's: a key of either finds the other, as == does
        return hash(self.value)

    @property
    def symbol(self) -> str:
        """``+`` or ``−``, as the calibration tables print it."""
        return "+" if self is Expectation.PASS else "\N{MINUS SIGN}"


@dataclass(frozen=True)
class Control:
    """One row of a kind's controls table: the suites the control is expected to pass or fail, in
    the order the table prints them, or, for a row that is no control (a baseline, a mixture
    tabulated for its own sake), a note.

    Example:
        >>> truth = Control.expecting(validity=Expectation.PASS, random_classifier=Expectation.FAIL)
        >>> truth.describe(), truth.on("validity"), Control(note="(baseline)").is_control
        ('+validity −random_classifier', <Expectation.PASS: '+'>, False)
    """

    expects: Mapping[str, Expectation] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        bad = {suite: value for suite, value in self.expects.items() if not isinstance(value, Expectation)}
        if bad:
            raise KindError(f"a control's expectations must be Expectation values, got {bad!r}")
        if not self.expects and not self.note:
            raise KindError("a control row needs expectations, or a note saying what it is tabulated for")

    @classmethod
    def expecting(cls, **suites: Expectation) -> Control:
        """A control expected to pass or fail each suite named (in the order given)."""
        return cls(expects=dict(suites))

    @property
    def is_control(self) -> bool:
        """Whether the row is a control (expected to pass or fail some suite)."""
        return bool(self.expects)

    def on(self, suite: str) -> Expectation | None:
        """What the control is expected to do on ``suite`` (None: nothing)."""
        return self.expects.get(suite)

    def describe(self) -> str:
        """The row as the calibration table prints it: ``+validity −closeness`` or the note."""
        return " ".join(f"{value.symbol}{suite}" for suite, value in self.expects.items()) or self.note


@dataclass(frozen=True)
class DomainCalibration:
    """How a kind earns a domain's bars: ``cfcheck calibrate --domain SPEC --kind <kind>``.

    Attributes:
        run: ``"module:function"``, resolved (:func:`resolve`) only when it runs; called with
            the parsed arguments (an :class:`argparse.Namespace`: ``domain``, ``profile``,
            ``seeds`` and this kind's ``options``), it returns the exit status and may raise
            ValueError or RuntimeError for a message to the user.
        summary: what it calibrates, for ``--kind``'s help (``"the VCE controls"``).
        options: the kind's own options, added to the command (their help says whose they are).
        values_file: the file (in the domain's calibration folder, ``{profile}`` filled in) where
            it keeps its controls' values per seed, read by the cards' evidence
            (:mod:`cfcheck.reporting.evidence`); None where it writes the per-score values of
            ``cfcheck calibrate`` (``calibration-<profile>.json``).
    """

    run: str
    summary: str
    options: tuple[Option, ...] = ()
    values_file: str | None = None

    def __post_init__(self) -> None:
        module, _, function = self.run.partition(":")
        if not module or not function.isidentifier():
            raise ValueError(f"`run` must be 'module:function', got {self.run!r}")

    def runner(self) -> Callable[[Any], int]:
        """The function :attr:`run` names."""
        function: Callable[[Any], int] = resolve(self.run, f"the domain calibration {self.run!r}")
        return function


@dataclass(frozen=True, kw_only=True)
class KindDeclaration:
    """One method kind, as the engine sees it before loading it; a ``cfcheck.kinds`` entry point
    names it.

    Attributes:
        name: the kind's value (``cfcheck_kind = name``, the suites' marker argument, the entry
            point's name).
        description: one line for error messages: what the kind is and its call.
        call: the name of the method cfcheck calls (``explain``).
        arguments: the positional arguments of that call, by name (a candidate method must be able
            to take as many).
        spec: ``"module:attribute"`` of the kind's :class:`cfcheck.kinds.base.KindSpec` instance.
        section: ``"module:attribute"`` of its profile section's defaults: profile name → section
            (a frozen dataclass with ``validate()``), torch-free.
        template: ``"module:attribute"`` of the adapter ``cfcheck new-adapter <name>`` writes (a
            ``str.format`` template with ``{name}``).
        suites: the package whose folder holds the kind's suites (``test_*.py``, marked with the
            kind); a run collects it with cfcheck's own suites.
        order: where the kind stands in every listing of the kinds (smallest first; then by name).
        adapters: the package of the kind's bundled adapters (``--method=<package>.<name>``), if any.
        methods: the module of the bundled reference methods the kind's calibration builds by name.
        rng_keyword: the keyword that carries cfcheck's seeded ``torch.Generator``.
        claims: for kinds that share a call name, whether a call with these parameter names is this
            kind's; a kind without it takes the call when no other kind of the same name claims it.
        protocol: the runtime-checkable Protocol that documents the call.
        fixtures: fixtures the kind's ``parametrize`` gives its suites besides ``cfcheck_task``
            (parametrised empty when no method is under test).
        markers: marker signature → help text, registered with pytest.
        task_sets: what ``@pytest.mark.cfcheck_tasks(which)`` accepts in the kind's suites.
        controls: the bundled controls that calibrate the kind (its controls table, declared in its
            folder) → what each is expected to pass and fail (:class:`Control`).
        control_suites: the suites the calibration tabulates for those controls.
        reference_methods: bundled reference methods the calibration tabulates beside the
            controls when named (``--methods``), never run by default → the text of their row.
        domain_calibration: how ``cfcheck calibrate --domain SPEC --kind <name>`` earns a domain's
            bars for this kind (None: the kind has no domain calibration).
        views: kinds whose methods this kind's suites can score through a view →
            (``"module:Class"`` of the view, what the view computes).
        task_revision: the revision of how the kind builds its tasks (inputs, targets or
            interventions, their seeds), bumped by hand whenever that changes: it is part of every
            protocol's identity (:mod:`cfcheck.core.protocol`).
        cards: the keys of the metric cards its suites record (cards of
            :data:`cfcheck.metrics.cards.CARDS`: cfcheck's own, or another kind's), checked when the
            kinds are loaded; a score of a card the kind declares neither here nor in
            :attr:`own_cards` is refused, and a protocol of the kind covers exactly these cards
            and its own.
        own_cards: the kind's own metric cards: :class:`~cfcheck.metrics.card.MetricCard` objects, or
            ``"module:attribute"`` naming a sequence of them (torch-free; resolved when the kinds
            load), registered into :data:`cfcheck.metrics.cards.CARDS` then (a key another card
            already has is refused, naming both).
    """

    name: str
    description: str
    call: str
    arguments: tuple[str, ...]
    spec: str
    section: str
    template: str
    suites: str
    order: int = 100
    adapters: str | None = None
    methods: str | None = None
    rng_keyword: str = "generator"
    claims: Callable[[frozenset[str]], bool] | None = None
    protocol: type | None = None
    fixtures: tuple[str, ...] = ()
    markers: Mapping[str, str] = field(default_factory=dict)
    task_sets: tuple[str, ...] = ("explained",)
    controls: Mapping[str, Control] = field(default_factory=dict)
    control_suites: tuple[str, ...] = ()
    reference_methods: Mapping[str, str] = field(default_factory=dict)
    domain_calibration: DomainCalibration | None = None
    views: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    task_revision: int = 1
    cards: tuple[str, ...] = ()
    own_cards: tuple[MetricCard, ...] | str = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or not self.name.islower():
            raise ValueError(f"a kind's name must be a lower-case identifier, got {self.name!r}")
        if isinstance(self.task_revision, bool) or not isinstance(self.task_revision, int) or self.task_revision < 1:
            raise ValueError(f"kind {self.name!r}: task_revision must be an integer >= 1, got {self.task_revision!r}")
        if not self.call.isidentifier() or not self.arguments:
            raise ValueError(
                f"kind {self.name!r}: call must name a method and arguments its positional "
                f"arguments, got {self.call!r}{self.arguments!r}"
            )
        for name in ("spec", "section", "template"):
            _check_reference(getattr(self, name), f"kind {self.name!r}: {name}")
        for name in ("suites", "adapters", "methods"):
            if getattr(self, name) is not None:
                _check_reference(getattr(self, name), f"kind {self.name!r}: {name}", module_only=True)
        for source, (view, _) in self.views.items():
            _check_reference(view, f"kind {self.name!r}: its view of {source!r}")
        bad = [name for name, row in self.controls.items() if not isinstance(row, Control)]
        if bad:
            raise KindError(f"kind {self.name!r}: the controls {bad} must be Control rows (cfcheck.kinds.declaration)")
        if not isinstance(self.cards, tuple) or not all(isinstance(key, str) and key for key in self.cards):
            raise KindError(f"kind {self.name!r}: cards must be a tuple of metric card keys, got {self.cards!r}")
        if isinstance(self.own_cards, str):
            if ":" not in self.own_cards:
                raise KindError(
                    f"kind {self.name!r}: own_cards is {self.own_cards!r}; expected 'package.module:attribute'"
                )
            _check_reference(self.own_cards, f"kind {self.name!r}: own_cards")
        else:
            self._checked_cards(self.own_cards, "own_cards")

    def _checked_cards(self, cards: Any, where: str) -> tuple[MetricCard, ...]:
        if isinstance(cards, (str, bytes)) or not isinstance(cards, (tuple, list)):
            raise KindError(f"kind {self.name!r}: {where} must be a sequence of MetricCard objects, got {cards!r}")
        wrong = [card for card in cards if not isinstance(card, MetricCard)]
        if wrong:
            raise KindError(
                f"kind {self.name!r}: {where} must hold MetricCard objects (cfcheck.metrics.card), got {wrong[0]!r}"
            )
        return tuple(cards)

    def own_metric_cards(self) -> tuple[MetricCard, ...]:
        """The kind's own cards (:attr:`own_cards`, its reference resolved).

        Raises:
            KindError: where the reference cannot be reached or names no sequence of cards.
        """
        if isinstance(self.own_cards, str):
            found = resolve(self.own_cards, f"kind {self.name!r} (own_cards)")
            return self._checked_cards(found, f"own_cards ({self.own_cards})")
        return tuple(self.own_cards)

    def card_keys(self) -> tuple[str, ...]:
        """Every card the kind's suites record: :attr:`cards`, then its own cards' keys."""
        return tuple(dict.fromkeys([*self.cards, *(card.key for card in self.own_metric_cards())]))

    def part(self, name: str, attribute: str | None = None) -> Any:
        """What the declaration's field ``name`` names (:func:`resolve`), or that module's ``attribute``.

        Example: ``declaration.part("spec")`` is the kind's :class:`~cfcheck.kinds.base.KindSpec`,
        ``declaration.part("methods", "Gradient")`` a bundled reference method's class.

        Raises:
            KindError: where the field names nothing, or what it names cannot be reached.
        """
        reference = getattr(self, name, None)
        if not isinstance(reference, str):
            raise KindError(f"kind {self.name!r} declares no {name}")
        if attribute is not None:
            reference = f"{reference}:{attribute}"
        return resolve(reference, f"kind {self.name!r} ({name})")

    def suite_folder(self) -> Path:
        """The folder of :attr:`suites` (found from the imported package, so an installed kind's
        suites are found where it is installed)."""
        package = self.part("suites")
        where = getattr(package, "__file__", None)
        if where is None:
            raise KindError(f"kind {self.name!r}: suites {self.suites!r} is not a package with an __init__.py")
        return Path(where).resolve().parent
