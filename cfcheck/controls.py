"""The bundled controls and what each exists to show, gathered from the kinds: the tables that the
calibration (:mod:`cfcheck.calibrate.run`) runs and the cards' measured evidence
(:mod:`cfcheck.reporting.evidence`) orders its controls by. Each kind declares its controls in
its folder (:class:`cfcheck.kinds.declaration.KindDeclaration`); this module gathers them, in the
registry's order, and names no kind."""

from __future__ import annotations

from cfcheck.kinds.registry import DECLARATIONS

#: kind → its bundled controls (and baseline) → the suites each is expected to pass (+) or fail (−),
#: for the kinds that declare controls, in the registry's order
KIND_CONTROL_TABLES: dict[str, dict[str, str]] = {
    name: dict(declaration.controls) for name, declaration in DECLARATIONS.items() if declaration.controls
}
#: kind → the suites its calibration tabulates for its controls (the kinds of :data:`KIND_CONTROL_TABLES`)
KIND_CONTROL_SUITES: dict[str, tuple[str, ...]] = {
    name: DECLARATIONS[name].control_suites for name in KIND_CONTROL_TABLES
}
#: The kind whose controls ``cfcheck calibrate`` runs when no ``--methods`` are named: the first in
#: the registry that declares controls.
DEFAULT_KIND: str = next(iter(KIND_CONTROL_TABLES))
#: Reference methods tabulated beside the controls (``--methods ... dvce fastdime``), not run by
#: default (each takes minutes) and never drawn as calibration markers, as the kinds declare them.
REFERENCE_METHODS: dict[str, str] = {
    name: text for declaration in DECLARATIONS.values() for name, text in declaration.reference_methods.items()
}


def control_order() -> tuple[str, ...]:
    """Every bundled control (and baseline) name, the kinds' tables in the registry's order."""
    return tuple(name for table in KIND_CONTROL_TABLES.values() for name in table)


def expectation(name: str) -> str:
    """What ``name`` is expected to pass and fail (its table's text), "" for a name of no table."""
    return next((table[name] for table in KIND_CONTROL_TABLES.values() if table.get(name)), "")


def is_control(name: str) -> bool:
    """Whether ``name`` is a bundled control (expected to pass or fail some suite): not the
    baseline, a reference method or an unknown one."""
    return any(word[:1] in "+−" for table in KIND_CONTROL_TABLES.values() for word in table.get(name, "").split())


def expected_sign(control: str, suite: str) -> str:
    """ "+" where the control is expected to pass ``suite``, "-" where to fail it, "" otherwise."""
    for word in expectation(control).split():
        if word[1:] == suite and word[0] in "+−":
            return "+" if word[0] == "+" else "-"
    return ""


def bundled_expectation(control: str, suite: str, metric: str) -> str | None:
    """The bundled controls' tables as the calibration store's ``expected`` rule
    (:func:`cfcheck.calibration.store.calibration_values`): :func:`expected_sign` for a control,
    None (not a control: its values are not kept) for the baseline, a reference method or an
    unknown name."""
    return expected_sign(control, suite) if is_control(control) else None
