"""cfcheck's command-line options, defined once (``pytest --help`` lists them under "cfcheck"), and
read once, with ``[tool.cfcheck]``, into the run's :class:`RunOptions` (:func:`read_options`); and
the domains they select, resolved (:func:`resolve_domains`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck.profiles import (
    INCONCLUSIVE_OUTCOMES,
    KNOWN_FAILURE_OUTCOMES,
    PROFILE_NAMES,
    Profile,
    read_user_settings,
    resolve_profile,
)

if TYPE_CHECKING:  # torch and the kinds load only when a method is under test
    import torch

    from cfcheck.core.sharding import Shard
    from cfcheck.domains.base import Domain
    from cfcheck.kinds.protocols import MethodKind


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("cfcheck", "counterfactual conformance (cfcheck)")
    group.addoption(
        "--method",
        metavar="MODULE",
        default=None,
        help="method under test: an importable module or .py file defining a 'cf_method' "
        "fixture, or package.module:attribute naming the method object (or a factory)",
    )
    group.addoption(
        "--cfcheck-profile",
        choices=PROFILE_NAMES,
        default=None,
        help="sample sizes and thresholds: quick (CI gating), standard (default), full (publication)",
    )
    group.addoption(
        "--cfcheck-device",
        default="cpu",
        help="device for the method and the reference models: cpu, cuda, cuda:N or auto (default cpu)",
    )
    group.addoption(
        "--cfcheck-inconclusive",
        choices=INCONCLUSIVE_OUTCOMES,
        default=None,
        help="pytest outcome when a score's 95%% interval straddles its bar: fail (default), xfail "
        "(reported, does not fail the run) or pass; [tool.cfcheck] inconclusive sets the default",
    )
    group.addoption("--cfcheck-seed", type=int, default=0, help="base seed of all tasks (default 0)")
    group.addoption(
        "--cfcheck-report-dir",
        type=Path,
        default=Path("reports"),
        help="where scorecards are written (default reports/)",
    )
    group.addoption(
        "--cfcheck-domain",
        action="append",
        default=None,
        metavar="SPEC",
        help="run the suites on this domain only (repeatable): a registered name (a bundled domain, or one an installed package registers), "
        "pkg.module:factory or path/to/domain.py[:factory] for a domain of your own (default: [tool.cfcheck] "
        "domains, else every registered domain and those a pytest_cfcheck_domains hook adds)",
    )
    group.addoption(
        "--cfcheck-view",
        action="append",
        default=None,
        metavar="KIND",
        help="also run KIND's suites on a view of the method as that kind (repeatable): 'attribution' "
        "scores a visual counterfactual explainer's direction x - c with ROAR, ROAD and GOAR",
    )
    group.addoption(
        "--cfcheck-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-call limit on the method: a call that takes longer fails its task (default: the "
        "profile's; 0 disables)",
    )
    group.addoption(
        "--cfcheck-cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="persistent generation cache (default: $CFCHECK_CACHE_DIR, else ~/.cache/cfcheck/generation)",
    )
    group.addoption(
        "--cfcheck-no-cache",
        action="store_true",
        default=False,
        help="neither read nor write the persistent generation cache",
    )
    group.addoption(
        "--cfcheck-shard",
        default=None,
        metavar="I/N",
        help="run shard I of N: a deterministic, balanced share of the tasks (with the tasks that need "
        "them); join the shards' run folders with `cfcheck merge`",
    )
    group.addoption(
        "--cfcheck-baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="a baseline (a stored scorecard JSON): scores worse than it beyond their tolerance, new "
        "failures and scores that vanished fail the run; scores that missed their bars there too are "
        "known failures (see --cfcheck-known-failures); changes.md beside the scorecard says what changed",
    )
    group.addoption(
        "--cfcheck-save-baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="after a complete run, store its scorecard JSON at PATH as a baseline, failures included "
        "(an incomplete run is not stored)",
    )
    group.addoption(
        "--cfcheck-known-failures",
        choices=KNOWN_FAILURE_OUTCOMES,
        default=None,
        help="against --cfcheck-baseline, the pytest outcome of a known failure: xfail (default: expected "
        "failure, a fix is reported as XPASS), strict (the same, but a fix fails until the baseline is "
        "refreshed) or fail; [tool.cfcheck] known_failures sets the default",
    )


@dataclass(frozen=True)
class RunOptions:
    """What cfcheck's options and ``[tool.cfcheck]`` ask of a run with ``--method``, read and checked
    once (:func:`read_options`)."""

    method: str  # --method, as given
    profile: Profile  # --cfcheck-profile with [tool.cfcheck] and the options that change it
    device: torch.device  # --cfcheck-device, resolved (not yet pinned to an xdist worker's GPU)
    seed: int
    report_dir: Path  # absolute: a relative one is taken from the directory pytest was started in
    #: the domain specs to run (--cfcheck-domain, else [tool.cfcheck] domains); empty: every registered
    #: domain and those a pytest_cfcheck_domains hook adds
    domains: tuple[str, ...]
    views: frozenset[MethodKind]
    shard: Shard | None
    baseline: Path | None  # --cfcheck-baseline
    save_baseline: Path | None
    cache_dir: Path | None  # None: the generation cache is off


def read_options(config: pytest.Config) -> RunOptions | None:
    """The run's options, read from ``config`` and ``[tool.cfcheck]`` (``pyproject.toml`` at the
    root); None without ``--method``, where cfcheck stays out of the way (a bad ``[tool.cfcheck]``
    then only warns: it must not break ordinary runs).

    Raises:
        pytest.UsageError: for an option or setting cfcheck cannot use, saying which and what it expects.
    """
    method = config.getoption("method")
    try:
        settings = read_user_settings(config.rootpath)
        profile = _profile(config, settings)
    except ValueError as error:
        if not method:
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(f"cfcheck: {error} (ignored: cfcheck runs only with --method)"),
                stacklevel=3,
            )
            return None
        raise pytest.UsageError(f"cfcheck: {error}") from None
    if not method:
        return None
    from cfcheck.core.cache import default_cache_dir
    from cfcheck.core.sharding import Shard

    try:
        shard = Shard.parse(config.getoption("cfcheck_shard")) if config.getoption("cfcheck_shard") else None
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    configured = settings.get("domains", [])
    if isinstance(configured, str) or not all(isinstance(s, str) for s in configured):
        raise pytest.UsageError(f"[tool.cfcheck] domains must be a list of domain specs, got {configured!r}")
    report_dir: Path = config.getoption("cfcheck_report_dir")
    no_cache = config.getoption("cfcheck_no_cache")
    return RunOptions(
        method=method,
        profile=profile,
        device=resolve_device(config.getoption("cfcheck_device")),
        seed=config.getoption("cfcheck_seed"),
        report_dir=report_dir if report_dir.is_absolute() else config.invocation_params.dir / report_dir,
        domains=tuple(split_list(config.getoption("cfcheck_domain")) or configured),
        views=parse_views(split_list(config.getoption("cfcheck_view"))),
        shard=shard,
        baseline=config.getoption("cfcheck_baseline"),
        save_baseline=config.getoption("cfcheck_save_baseline"),
        cache_dir=None if no_cache else (config.getoption("cfcheck_cache_dir") or default_cache_dir()),
    )


def _profile(config: pytest.Config, settings: dict[str, Any]) -> Profile:
    """``--cfcheck-profile`` (else ``[tool.cfcheck] profile``, else standard) with ``settings``, and the
    options that change it; ValueError for a setting or option it cannot take."""
    profile = resolve_profile(config.getoption("cfcheck_profile") or settings.get("profile", "standard"), settings)
    if config.getoption("cfcheck_inconclusive"):
        profile = dataclasses.replace(profile, inconclusive=config.getoption("cfcheck_inconclusive"))
    if config.getoption("cfcheck_known_failures"):
        profile = dataclasses.replace(profile, known_failures=config.getoption("cfcheck_known_failures"))
    timeout = config.getoption("cfcheck_timeout")
    if timeout is not None:
        if timeout < 0:
            raise ValueError(f"--cfcheck-timeout must be >= 0 seconds, got {timeout:g}")
        profile = dataclasses.replace(profile, timeout=timeout)
    return profile


def parse_views(names: list[str]) -> frozenset[MethodKind]:
    """The kinds named by --cfcheck-view; UsageError for a kind no view leads to."""
    from cfcheck.kinds import kind_views

    views = kind_views()
    targets = {target.value: target for _, target in views}
    unknown = [name for name in names if name not in targets]
    if unknown:
        raise pytest.UsageError(
            f"--cfcheck-view: no view as {', '.join(map(repr, unknown))}; available: "
            + "; ".join(
                f"{target.value} (for {source.value} methods: {what})" for (source, target), (_, what) in views.items()
            )
        )
    return frozenset(targets[name] for name in names)


def resolve_domains(config: pytest.Config, requested: tuple[str, ...]) -> tuple[dict[str, Domain], dict[str, str]]:
    """The run's domains by name, resolved once: the ``requested`` specs (:attr:`RunOptions.domains`),
    else every registered domain and every domain a ``pytest_cfcheck_domains`` hook adds; and, by
    spec, the message of each that could not be resolved (the run records it and keeps the others)."""
    from cfcheck.domains.registry import DomainError, forget_unregistered_domains, registered_domains, resolve_domain

    forget_unregistered_domains()  # a user's domain is this run's: rebuilt from its module and folder

    def resolved(spec: Any) -> Any:
        """The domain of ``spec``, or the message of why it has none."""
        try:
            return resolve_domain(spec, config.rootpath)
        except DomainError as error:
            return str(error)

    # each resolved once, so known by name from now on, whether or not the run selects it (a factory a
    # hook returns is called once: a second call would make a second object under the same name)
    hooked = [
        (spec if isinstance(spec, str) else repr(spec), resolved(spec))
        for found in config.hook.pytest_cfcheck_domains(config=config) or []
        for spec in found or []
    ]
    selected = [(spec, resolved(spec)) for spec in requested or registered_domains()]
    if not requested:
        selected += hooked
    chosen: dict[str, Domain] = {}
    broken: dict[str, str] = {}
    for label, domain in selected:
        if isinstance(domain, str):
            broken[label] = domain
            continue
        if domain.name in chosen and chosen[domain.name] is not domain:
            broken[label] = (
                f"two domains are named {domain.name!r} in this run; domain names identify scores and must be unique"
            )
            continue
        chosen[domain.name] = domain
    return chosen, broken


def split_list(values: list[str] | None) -> list[str]:
    """``--opt a --opt b,c`` → ["a", "b", "c"]."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def resolve_device(name: str) -> torch.device:
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise pytest.UsageError(f"--cfcheck-device={name!r} is not a torch device (cpu, cuda, cuda:N, auto)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise pytest.UsageError(f"--cfcheck-device={name}: CUDA is not available on this machine")
    return device
