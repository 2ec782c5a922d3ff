"""The bundled controls and what each exists to show, gathered from the kinds: the tables that the
calibration (:mod:`cfcheck.cli.calibrate_run`) runs and the cards' measured evidence
(:mod:`cfcheck.reporting.evidence`) orders its controls by. Each kind declares its controls table in
its own folder (:attr:`cfcheck.kinds.declaration.KindDeclaration.controls`: name →
:class:`~cfcheck.kinds.declaration.Control`, whose expectations are
:class:`~cfcheck.kinds.declaration.Expectation` values); this module gathers them, in the kinds'
order, and names no kind."""

from __future__ import annotations

from cfcheck.kinds.declaration import Control, Expectation
from cfcheck.kinds.registry import DECLARATIONS

__all__ = [
    "DEFAULT_KIND",
    "KIND_CONTROL_SUITES",
    "KIND_CONTROL_TABLES",
    "REFERENCE_METHODS",
    "bundled_expectation",
    "control_order",
    "expectation",
    "expected_sign",
    "is_control",
]

#: kind → its bundled controls (and baseline) → what each is expected to pass and fail, for the kinds
#: that declare controls, in the kinds' order
KIND_CONTROL_TABLES: dict[str, dict[str, Control]] = {
    name: dict(declaration.controls) for name, declaration in DECLARATIONS.items() if declaration.controls
}
#: kind → the suites its calibration tabulates for its controls (the kinds of :data:`KIND_CONTROL_TABLES`)
KIND_CONTROL_SUITES: dict[str, tuple[str, ...]] = {
    name: DECLARATIONS[name].control_suites for name in KIND_CONTROL_TABLES
}
#: The kind whose controls ``cfcheck calibrate`` runs when no ``--methods`` are named: the first
#: kind that declares controls.
DEFAULT_KIND: str = next(iter(KIND_CONTROL_TABLES))
#: Reference methods tabulated beside the controls (``--methods ... dvce fastdime``), not run by
#: default (each takes minutes) and never drawn as calibration markers, as the kinds declare them.
REFERENCE_METHODS: dict[str, str] = {
    name: text for declaration in DECLARATIONS.values() for name, text in declaration.reference_methods.items()
}


def control_order() -> tuple[str, ...]:
    """Every bundled control (and baseline) name, the kinds' tables in the kinds' order."""
    return tuple(name for table in KIND_CONTROL_TABLES.values() for name in table)


def _row(name: str) -> Control | None:
    return next((table[name] for table in KIND_CONTROL_TABLES.values() if name in table), None)


def expectation(name: str) -> str:
    """What ``name`` is expected to pass and fail, as the calibration table prints it
    (``+validity −closeness``, or the row's note); "" for a name of no table."""
    row = _row(name)
    return row.describe() if row is not None else ""


def is_control(name: str) -> bool:
    """Whether ``name`` is a bundled control (expected to pass or fail some suite): not the
    baseline, a reference method or an unknown one."""
    row = _row(name)
    return row is not None and row.is_control


def expected_sign(control: str, suite: str) -> Expectation | None:
    """What ``control`` is expected to do on ``suite``: :attr:`Expectation.PASS`,
    :attr:`Expectation.FAIL`, or None (nothing, or no control of that name)."""
    row = _row(control)
    return row.on(suite) if row is not None else None


def bundled_expectation(control: str, suite: str, metric: str) -> str | None:
    """The bundled controls' tables as the calibration store's ``expected`` rule
    (:func:`cfcheck.calibration.store.calibration_values`): the sign the files keep ("+", "-", or ""
    for neither) for a control, None (not a control: its values are not kept) for the baseline, a
    reference method or an unknown name."""
    if not is_control(control):
        return None
    sign = expected_sign(control, suite)
    return sign.value if sign is not None else ""
