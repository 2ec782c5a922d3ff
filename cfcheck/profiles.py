"""Run profiles: how many samples and seeds, the per-call timeout, and the thresholds asserted.

A profile trades time for statistical power: ``quick`` gates a method's CI in minutes on a CPU,
``standard`` is the default for development, ``full`` is for publication. Each method kind adds
its own section (``profile.section("vce").n_per_source``), defined in the kind's folder. Every
field can be overridden from ``[tool.cfcheck]`` (all profiles) or ``[tool.cfcheck.<profile>]``
(one profile) in the user's ``pyproject.toml`` — a section's field by its name where that name
is unique, or in a ``[tool.cfcheck.<kind>]`` table; thresholds under ``[tool.cfcheck.thresholds]``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfcheck.core.seeds import TASK_SEEDS, seeded
from cfcheck.metrics.cards import Bar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

PROFILE_NAMES = ("quick", "standard", "full")


def _kinds() -> tuple[str, ...]:
    from cfcheck.kinds.protocols import MethodKind  # torch-free

    return tuple(kind.value for kind in MethodKind)


#: kinds with a profile section (each kind's folder under cfcheck/kinds defines its section)
SECTION_KINDS = _kinds()


#: A pass bar; the bars themselves live on the metric cards (cfcheck.metrics.definitions).
Threshold = Bar

#: How an inconclusive verdict (95% interval straddling the bar) ends its pytest test.
INCONCLUSIVE_OUTCOMES = ("fail", "xfail", "pass")

#: How a known failure (a score that missed its bar in the baseline and misses it now, no worse
#: beyond its tolerance) ends its pytest test: "xfail" (expected failure; a fix is reported as
#: XPASS), "strict" (the same, but a fix fails until the baseline is refreshed) or "fail".
KNOWN_FAILURE_OUTCOMES = ("xfail", "strict", "fail")


def default_thresholds(profile: str) -> dict[str, Bar]:
    """Every metric card's bar for ``profile``, the kinds' own cards included (metrics without a bar are
    left out)."""
    from cfcheck.kinds.registry import loaded_cards

    return {key: bar for key, card in loaded_cards().items() if (bar := card.bar_for(profile)) is not None}


def default_tolerances() -> dict[str, float]:
    from cfcheck.kinds.registry import loaded_cards

    return {key: card.tolerance for key, card in loaded_cards().items()}


@dataclass(frozen=True)
class Profile:
    """Everything a run needs to know about its size and its bars."""

    name: str
    seeds: int  # independent repetitions (task seeds base, base+1, ...)
    batch_size: int = 128  # inputs per call of the method
    #: seconds one call of the method may take before its task fails (0: no limit)
    timeout: int = 1800
    bootstrap_resamples: int = 1000
    determinism_batch: int = 4  # inputs used to check determinism and non-mutation
    #: pytest outcome of an inconclusive verdict: "fail" (default: a gate needs evidence),
    #: "xfail" (reported, does not fail the run) or "pass"
    inconclusive: str = "fail"
    #: against a baseline, how a known failure ends its test (see :data:`KNOWN_FAILURE_OUTCOMES`)
    known_failures: str = "xfail"
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    tolerances: Mapping[str, float] = field(default_factory=default_tolerances)
    #: the user's overrides of kind sections: kind → field → value (checked by :meth:`section`)
    section_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.thresholds:
            object.__setattr__(self, "thresholds", default_thresholds(self.name))
        if self.inconclusive not in INCONCLUSIVE_OUTCOMES:
            raise ValueError(f"inconclusive must be one of {INCONCLUSIVE_OUTCOMES}, got {self.inconclusive!r}")
        if self.known_failures not in KNOWN_FAILURE_OUTCOMES:
            raise ValueError(f"known_failures must be one of {KNOWN_FAILURE_OUTCOMES}, got {self.known_failures!r}")
        object.__setattr__(self, "_sections", {})

    def section(self, kind: str) -> Any:
        """The profile section of ``kind`` (its defaults for this profile plus the user's
        overrides), validated; ValueError names a bad setting."""
        cache = self._sections  # type: ignore[attr-defined]
        if kind not in cache:
            from cfcheck.kinds import section_defaults

            default = section_defaults(kind)[self.name]
            overrides = dict(self.section_settings.get(kind, {}))
            known = {f.name: f for f in dataclasses.fields(default)}
            for key, value in overrides.items():
                if key not in known:
                    raise ValueError(
                        f"unknown [tool.cfcheck] setting {key!r} for {kind} methods; expected one of {sorted(known)}"
                    )
                overrides[key] = _coerce(key, value)
            section = dataclasses.replace(default, **overrides)
            section.validate()
            cache[kind] = section
        return cache[kind]

    def check_sections(self) -> None:
        """Resolve every kind's section now, so a bad setting is a usage error at startup;
        also rejects settings no section knows."""
        for kind in self.section_settings:
            if kind not in SECTION_KINDS:
                raise ValueError(
                    f"unknown [tool.cfcheck] setting(s) {sorted(self.section_settings[kind])}; expected one of "
                    f"{sorted(_SCALAR_FIELDS)}, a kind section field ({_section_fields()}), "
                    "'thresholds', 'tolerances' or a profile table"
                )
        for kind in SECTION_KINDS:
            self.section(kind)

    def describe_sections(self) -> dict[str, dict[str, Any]]:
        return {kind: dataclasses.asdict(section) for kind, section in self._sections.items()}  # type: ignore[attr-defined]

    def threshold(self, metric: str) -> Threshold | None:
        return self.thresholds.get(metric)

    def task_seeds(self, base_seed: int) -> tuple[int, ...]:
        return tuple(seeded(base_seed, TASK_SEEDS, i) for i in range(self.seeds))


BUILTIN_PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", seeds=1, bootstrap_resamples=500, timeout=600),
    "standard": Profile("standard", seeds=2),
    "full": Profile("full", seeds=3, bootstrap_resamples=2000, timeout=3600),
}

_SCALAR_FIELDS = {
    f.name: f.type
    for f in dataclasses.fields(Profile)
    if f.name not in ("name", "thresholds", "tolerances", "section_settings")
}
#: unknown top-level keys are kept here until the kinds' sections claim them
_UNCLAIMED = "unclaimed"


def _section_fields() -> str:
    return ", ".join(sorted({name for kind in SECTION_KINDS for name in _fields_of(kind)}))


def _fields_of(kind: str) -> set[str]:
    from cfcheck.kinds import section_defaults

    return {f.name for f in dataclasses.fields(section_defaults(kind)["quick"])}


def read_user_settings(rootdir: Path) -> dict[str, Any]:
    """The ``[tool.cfcheck]`` table of ``rootdir/pyproject.toml``, or ``{}``."""
    pyproject = Path(rootdir) / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    with pyproject.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"cannot parse {pyproject}: {error}") from error
    settings = data.get("tool", {}).get("cfcheck", {})
    if not isinstance(settings, dict):
        raise ValueError(f"[tool.cfcheck] in {pyproject} must be a table")
    return settings


def resolve_profile(name: str, settings: Mapping[str, Any] | None = None) -> Profile:
    """The built-in profile ``name`` with the user's overrides applied and validated."""
    if name not in BUILTIN_PROFILES:
        raise ValueError(f"unknown cfcheck profile {name!r}; expected one of {PROFILE_NAMES}")
    settings = dict(settings or {})
    profile = BUILTIN_PROFILES[name]
    overrides: dict[str, Any] = {}
    sections: dict[str, dict[str, Any]] = {}
    for scope in (settings, settings.get(name, {})):
        for key, value in scope.items():
            if key in PROFILE_NAMES or key in ("profile", "thresholds", "tolerances", "domains"):
                continue
            if key in SECTION_KINDS:
                if not isinstance(value, Mapping):
                    raise ValueError(f"[tool.cfcheck] {key} must be a table of {key} settings")
                sections.setdefault(key, {}).update(value)
            elif key in _SCALAR_FIELDS:
                overrides[key] = _coerce(key, value)
            else:  # a kind section's field, claimed by the kind that defines it (see _claim)
                sections.setdefault(_UNCLAIMED, {})[key] = value
    thresholds = dict(profile.thresholds)
    tolerances = dict(profile.tolerances)
    for scope in (settings, settings.get(name, {})):
        for metric, bound in scope.get("thresholds", {}).items():
            key = _metric_key(metric, "thresholds")
            thresholds[key] = _parse_threshold(key, bound, thresholds.get(key))
        for metric, tolerance in scope.get("tolerances", {}).items():
            if not isinstance(tolerance, (int, float)) or tolerance < 0:
                raise ValueError(f"tolerance for {metric!r} must be a number >= 0, got {tolerance!r}")
            tolerances[_metric_key(metric, "tolerances")] = float(tolerance)
    resolved = dataclasses.replace(
        profile, thresholds=thresholds, tolerances=tolerances, section_settings=sections, **overrides
    )
    return claim_section_settings(resolved)


def claim_section_settings(profile: Profile) -> Profile:
    """Route top-level settings (``n_per_source = 3``) to the kind section that defines that
    field; a field several kinds define must be set in a ``[tool.cfcheck.<kind>]`` table.
    Then resolve every section, so a bad value is reported now (ValueError)."""
    sections = {k: dict(v) for k, v in profile.section_settings.items()}
    unclaimed = sections.pop(_UNCLAIMED, {})
    for key, value in unclaimed.items():
        owners = [kind for kind in SECTION_KINDS if key in _fields_of(kind)]
        if not owners:
            raise ValueError(
                f"unknown [tool.cfcheck] setting {key!r}; expected one of {sorted(_SCALAR_FIELDS)}, a kind "
                f"section field ({_section_fields()}), 'thresholds', 'tolerances' or a profile table"
            )
        if len(owners) > 1:
            raise ValueError(
                f"[tool.cfcheck] setting {key!r} is ambiguous ({', '.join(sorted(owners))} define it): set it in a "
                "[tool.cfcheck.<kind>] table"
            )
        sections.setdefault(owners[0], {}).setdefault(key, value)
    claimed = dataclasses.replace(profile, section_settings=sections)
    claimed.check_sections()
    return claimed


def _coerce(key: str, value: Any) -> Any:
    if key == "inconclusive":
        if value not in INCONCLUSIVE_OUTCOMES:
            raise ValueError(f"[tool.cfcheck] inconclusive must be one of {INCONCLUSIVE_OUTCOMES}, got {value!r}")
        return value
    if key == "known_failures":
        if value not in KNOWN_FAILURE_OUTCOMES:
            raise ValueError(f"[tool.cfcheck] known_failures must be one of {KNOWN_FAILURE_OUTCOMES}, got {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        if not (numbers or all(isinstance(v, str) for v in value)):
            raise ValueError(f"[tool.cfcheck] {key} must be a list of strings or of numbers, got {value!r}")
        return tuple(float(v) for v in value) if numbers and value else tuple(value)
    if key == "timeout" and isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"[tool.cfcheck] {key} must be a positive integer, got {value!r}")
    return value


def _metric_key(name: str, table: str) -> str:
    """A ``[tool.cfcheck.<table>]`` key in the one spelling, ``card:variant`` (quoted in TOML:
    ``"road_gap:morf" = 0.02``); the older ``card_variant`` is read too."""
    from cfcheck.core.keys import MetricKey
    from cfcheck.kinds.registry import loaded_cards

    try:
        return str(MetricKey.read(str(name), loaded_cards()))
    except ValueError as error:
        raise ValueError(f"[tool.cfcheck.{table}] {name!r}: {error}") from None


def _parse_threshold(metric: str, bound: Any, default: Threshold | None) -> Threshold:
    """Accept ``metric = 0.9`` (keeping the default direction) or ``{min = 0.9}``/``{max = 2}``."""
    if isinstance(bound, Mapping) and len(bound) == 1:
        ((kind, value),) = bound.items()
        if isinstance(value, (int, float)):
            return Threshold(float(value), str(kind))
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        if default is None:
            from cfcheck.core.keys import MetricKey
            from cfcheck.kinds.registry import loaded_cards

            cards = loaded_cards()
            card = MetricKey.parse(metric).card
            direction = cards[card].direction if card in cards else "none"
            if direction == "none":
                raise ValueError(f"threshold for {metric!r} needs a direction: {{min = x}} or {{max = x}}")
            return Threshold(float(bound), "min" if direction == "higher" else "max")
        return Threshold(float(bound), default.kind)
    raise ValueError(f"threshold for {metric!r} must be a number or {{min = x}} / {{max = x}}, got {bound!r}")
