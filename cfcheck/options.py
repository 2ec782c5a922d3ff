"""cfcheck's command-line options, defined once (``pytest --help`` lists them under "cfcheck")."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfcheck.profiles import INCONCLUSIVE_OUTCOMES, PROFILE_NAMES


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
        metavar="NAME",
        help="run the suites on this bundled domain only (repeatable; default: every domain that has "
        "suites for the method's kind)",
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
        help="stored scorecard JSON; scores worse than it beyond tolerance fail as regressions",
    )
    group.addoption(
        "--cfcheck-save-baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="after a complete run without failures, store its scorecard JSON at PATH",
    )
