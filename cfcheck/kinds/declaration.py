"""What a method kind declares about itself, torch-free, in its own folder.

Each kind's folder has a ``declaration.py`` defining ``DECLARATION``, a :class:`KindDeclaration`;
:mod:`cfcheck.kinds.registry` lists the folders. The plugin reads declarations before any model
loads (markers, parametrised fixture names, kind detection, the kind list); the kind's
:class:`cfcheck.kinds.base.KindSpec` (``spec.py``, with torch) is the engine part.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: one command-line option: its flags and :meth:`argparse.ArgumentParser.add_argument`'s keywords
Option = tuple[tuple[str, ...], Mapping[str, Any]]


@dataclass(frozen=True)
class DomainCalibration:
    """How a kind earns a domain's bars: ``cfcheck calibrate --domain SPEC --kind <kind>``.

    Attributes:
        run: ``"module:function"`` in the kind's folder, imported only when it runs; called with
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


@dataclass(frozen=True)
class KindDeclaration:
    """One method kind, as the engine sees it before loading it.

    Attributes:
        name: the kind's value (``cfcheck_kind = name``, the suites' marker argument, its folder).
        description: one line for error messages: what the kind is and its call.
        call: the name of the method cfcheck calls (``explain``).
        arguments: the positional arguments of that call, by name (a candidate method must be able
            to take as many).
        rng_keyword: the keyword that carries cfcheck's seeded ``torch.Generator``.
        claims: for kinds that share a call name, whether a call with these parameter names is this
            kind's; a kind without it takes the call when no other kind of the same name claims it.
        protocol: the runtime-checkable Protocol that documents the call.
        fixtures: fixtures the kind's ``parametrize`` gives its suites besides ``cfcheck_task``
            (parametrised empty when no method is under test).
        markers: marker signature → help text, registered with pytest.
        task_sets: what ``@pytest.mark.cfcheck_tasks(which)`` accepts in the kind's suites.
        controls: the bundled controls that calibrate the kind → the suites each is expected to
            pass (+) or fail (−) (a text without a sign: tabulated, not a control).
        control_suites: the suites the calibration tabulates for those controls.
        reference_methods: bundled reference methods the calibration tabulates beside the
            controls when named (``--methods``), never run by default → the text of their row.
        domain_calibration: how ``cfcheck calibrate --domain SPEC --kind <name>`` earns a domain's
            bars for this kind (None: the kind has no domain calibration).
        views: kinds whose methods this kind's suites can score through a view →
            ("module:Class" of the view, what the view computes).
    """

    name: str
    description: str
    call: str
    arguments: tuple[str, ...]
    rng_keyword: str = "generator"
    claims: Callable[[frozenset[str]], bool] | None = None
    protocol: type | None = None
    fixtures: tuple[str, ...] = ()
    markers: Mapping[str, str] = field(default_factory=dict)
    task_sets: tuple[str, ...] = ("explained",)
    controls: Mapping[str, str] = field(default_factory=dict)
    control_suites: tuple[str, ...] = ()
    reference_methods: Mapping[str, str] = field(default_factory=dict)
    domain_calibration: DomainCalibration | None = None
    views: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or not self.name.islower():
            raise ValueError(f"a kind's name must be a lower-case identifier (its folder), got {self.name!r}")
        if not self.call.isidentifier() or not self.arguments:
            raise ValueError(
                f"kind {self.name!r}: call must name a method and arguments its positional "
                f"arguments, got {self.call!r}{self.arguments!r}"
            )
