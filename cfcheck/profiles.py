"""Run profiles: how many samples, which classifiers and seeds, and the thresholds asserted.

A profile trades time for statistical power: ``quick`` gates a method's CI in minutes on a CPU,
``standard`` is the default for development, ``full`` is for publication. Every field can be
overridden from ``[tool.cfcheck]`` (all profiles) or ``[tool.cfcheck.<profile>]`` (one profile)
in the user's ``pyproject.toml``; thresholds under ``[tool.cfcheck.thresholds]``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfcheck.metrics.cards import Bar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

PROFILE_NAMES = ("quick", "standard", "full")

#: Explained classifiers of the morpho domain; RandomNet is only used by the sanity suite.
EXPLAINED_CLASSIFIERS = ("cnn", "robust_cnn", "mlp", "noise_cnn")


#: A pass bar; the bars themselves live on the metric cards (cfcheck.metrics.definitions).
Threshold = Bar

#: How an inconclusive verdict (95% interval straddling the bar) ends its pytest test.
INCONCLUSIVE_OUTCOMES = ("fail", "xfail", "pass")


def default_thresholds(profile: str) -> dict[str, Bar]:
    """Every metric card's bar for ``profile`` (metrics without a bar are left out)."""
    from cfcheck.metrics.cards import CARDS

    return {key: bar for key, card in CARDS.items() if (bar := card.bar_for(profile)) is not None}


def default_tolerances() -> dict[str, float]:
    from cfcheck.metrics.cards import CARDS

    return {key: card.tolerance for key, card in CARDS.items()}


@dataclass(frozen=True)
class Profile:
    """Everything a run needs to know about its size and its bars."""

    name: str
    n_per_source: int  # source images per digit and task
    seeds: int  # independent repetitions (task seeds base, base+1, ...)
    classifiers: tuple[str, ...] = EXPLAINED_CLASSIFIERS
    pair_sets: tuple[str, ...] = ("ideal", "other")
    batch_size: int = 128  # inputs per call of the method
    bootstrap_resamples: int = 1000
    determinism_batch: int = 4  # inputs used to check determinism and non-mutation
    #: pytest outcome of an inconclusive verdict: "fail" (default: a gate needs evidence),
    #: "xfail" (reported, does not fail the run) or "pass"
    inconclusive: str = "fail"
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    tolerances: Mapping[str, float] = field(default_factory=default_tolerances)

    def __post_init__(self) -> None:
        if not self.thresholds:
            object.__setattr__(self, "thresholds", default_thresholds(self.name))
        if self.inconclusive not in INCONCLUSIVE_OUTCOMES:
            raise ValueError(f"inconclusive must be one of {INCONCLUSIVE_OUTCOMES}, got {self.inconclusive!r}")

    def threshold(self, metric: str) -> Threshold | None:
        return self.thresholds.get(metric)

    def task_seeds(self, base_seed: int) -> tuple[int, ...]:
        return tuple(base_seed + i for i in range(self.seeds))


BUILTIN_PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", n_per_source=12, seeds=1, bootstrap_resamples=500),
    "standard": Profile("standard", n_per_source=40, seeds=2),
    "full": Profile("full", n_per_source=100, seeds=3, bootstrap_resamples=2000),
}

_SCALAR_FIELDS = {
    f.name: f.type
    for f in dataclasses.fields(Profile)
    if f.name not in ("name", "thresholds", "tolerances")
}


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
    for scope in (settings, settings.get(name, {})):
        for key, value in scope.items():
            if key in PROFILE_NAMES or key in ("profile", "thresholds", "tolerances"):
                continue
            if key not in _SCALAR_FIELDS:
                raise ValueError(
                    f"unknown [tool.cfcheck] setting {key!r}; expected one of "
                    f"{sorted(_SCALAR_FIELDS)}, 'thresholds', 'tolerances' or a profile table"
                )
            overrides[key] = _coerce(key, value)
    thresholds = dict(profile.thresholds)
    tolerances = dict(profile.tolerances)
    for scope in (settings, settings.get(name, {})):
        for metric, bound in scope.get("thresholds", {}).items():
            thresholds[metric] = _parse_threshold(metric, bound, thresholds.get(metric))
        for metric, tolerance in scope.get("tolerances", {}).items():
            if not isinstance(tolerance, (int, float)) or tolerance < 0:
                raise ValueError(f"tolerance for {metric!r} must be a number >= 0, got {tolerance!r}")
            tolerances[metric] = float(tolerance)
    return dataclasses.replace(profile, thresholds=thresholds, tolerances=tolerances, **overrides)


def _coerce(key: str, value: Any) -> Any:
    if key == "inconclusive":
        if value not in INCONCLUSIVE_OUTCOMES:
            raise ValueError(f"[tool.cfcheck] inconclusive must be one of {INCONCLUSIVE_OUTCOMES}, got {value!r}")
        return value
    if key in ("classifiers", "pair_sets"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"[tool.cfcheck] {key} must be a list of strings, got {value!r}")
        unknown = set(value) - set(EXPLAINED_CLASSIFIERS if key == "classifiers" else ("ideal", "other"))
        if unknown:
            raise ValueError(f"[tool.cfcheck] {key} has unknown entries {sorted(unknown)}")
        return tuple(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"[tool.cfcheck] {key} must be a positive integer, got {value!r}")
    return value


def _parse_threshold(metric: str, bound: Any, default: Threshold | None) -> Threshold:
    """Accept ``metric = 0.9`` (keeping the default direction) or ``{min = 0.9}``/``{max = 2}``."""
    if isinstance(bound, Mapping) and len(bound) == 1:
        (kind, value), = bound.items()
        if isinstance(value, (int, float)):
            return Threshold(float(value), str(kind))
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        if default is None:
            from cfcheck.metrics.cards import CARDS

            direction = CARDS[metric].direction if metric in CARDS else "none"
            if direction == "none":
                raise ValueError(f"threshold for {metric!r} needs a direction: {{min = x}} or {{max = x}}")
            return Threshold(float(bound), "min" if direction == "higher" else "max")
        return Threshold(float(bound), default.kind)
    raise ValueError(f"threshold for {metric!r} must be a number or {{min = x}} / {{max = x}}, got {bound!r}")
