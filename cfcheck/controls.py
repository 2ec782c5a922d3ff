"""The bundled controls and what each exists to show: the one table that the calibration
(:mod:`cfcheck.calibration.run`) runs and the cards' measured evidence
(:mod:`cfcheck.calibration.evidence`) orders its controls by. Each kind declares its controls in
its folder (:class:`cfcheck.kinds.declaration.KindDeclaration`); this module gathers them."""

from __future__ import annotations

from cfcheck.kinds.registry import DECLARATIONS

#: kind → its bundled controls (and baseline) → the suites each is expected to pass (+) or fail (−),
#: for the kinds that declare controls, in the registry's order
KIND_CONTROL_TABLES: dict[str, dict[str, str]] = {
    name: dict(declaration.controls) for name, declaration in DECLARATIONS.items() if declaration.controls
}
#: The tables by the names the calibration modules use: the VCE controls and baseline (the
#: calibration's default run) and the SCM controls, with the suites each kind's table tabulates.
CONTROLS: dict[str, str] = KIND_CONTROL_TABLES["vce"]
SUITES = DECLARATIONS["vce"].control_suites
SCM_CONTROLS: dict[str, str] = KIND_CONTROL_TABLES["scm"]
SCM_SUITES = DECLARATIONS["scm"].control_suites
#: Reference methods tabulated beside the controls (``--methods ... dvce fastdime``), not run by
#: default (each takes minutes) and never drawn as calibration markers.
REFERENCE_METHODS: dict[str, str] = {
    "dvce": "(diffusion reference)",
    "fastdime": "(diffusion reference)",
}


def is_control(name: str) -> bool:
    """Whether ``name`` is a bundled control (expected to pass or fail some suite): not the
    baseline, a reference method or an unknown one."""
    return any(word[:1] in "+−" for table in KIND_CONTROL_TABLES.values() for word in table.get(name, "").split())
