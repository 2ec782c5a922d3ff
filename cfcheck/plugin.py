"""The cfcheck pytest plugin: options, the session object, fixtures and reporting hooks.

Registered through the ``pytest11`` entry point, so ``pytest --method=mymodule`` works from any
directory once cfcheck is installed. Without ``--method`` the plugin stays out of the way.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, cast

import pytest

from cfcheck import faults
from cfcheck.core import xdist_groups
from cfcheck.kinds.contract import CONTRACT_FIXTURE, parametrize_contract
from cfcheck.kinds.protocols import MethodKind
from cfcheck.kinds.registry import kind_fixtures, kind_markers, task_sets
from cfcheck.options import add_options, read_options
from cfcheck.plugin_collection import WithUnusableDomains, domain_matches_task, suite_marker, suite_markers, suite_roots
from cfcheck.plugin_fixtures import (  # noqa: F401 - fixtures, registered with the plugin
    DOMAIN_FIXTURE,
    KIND_MARKER,
    cfcheck_device,
    cfcheck_domain,
    cfcheck_evaluation_models,
    cfcheck_method,
    cfcheck_models,
    cfcheck_profile,
    cfcheck_result,
    cfcheck_score,
    cfcheck_seed,
    cfcheck_session,
    session_key,
)
from cfcheck.plugin_reporting import (
    WORKER_OUTPUT,
    OutcomeCounter,
    hand_to_controller,
    install_baseline_gate,
    merge_from_worker,
    summary_lines,
)

if TYPE_CHECKING:  # the session loads only when a method is under test
    from cfcheck.domains.base import Domain
    from cfcheck.session import CfcheckSession


TASKS_MARKER = "cfcheck_tasks"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from cfcheck import hookspecs
    from cfcheck.reporting.formats import register_bundled

    pluginmanager.add_hookspecs(hookspecs)
    register_bundled(pluginmanager)  # the bundled report formats, plugins like a user's (-p no:<name> drops one)


def pytest_configure(config: pytest.Config) -> None:
    """Declare cfcheck's markers; with ``--method``, create the run's session (kept in ``config.stash``)
    and register its hooks' helpers; without, stay out of the way. The kinds load first (their markers,
    and their own metric cards, which every test that reads a card then finds)."""
    _declare_markers(config)
    options = read_options(config)
    if options is None:
        config.stash[session_key] = None
        return
    from cfcheck.session import CfcheckSession

    config.stash[session_key] = cf_session = CfcheckSession.from_config(config, options)
    if config.args_source is not pytest.Config.ArgsSource.ARGS:  # the suites, unless the user named paths
        config.args[:] = [str(root) for root in suite_roots()]
    xdist_groups.install(config)
    config.pluginmanager.register(OutcomeCounter(cf_session), "cfcheck-outcomes")
    install_baseline_gate(config, cf_session)
    faults.stop_on_sigterm(config)


def _declare_markers(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{KIND_MARKER}(kind): the method kind a cfcheck suite applies to")
    for signature, text in kind_markers().items():  # each kind's own markers, declared in its folder
        config.addinivalue_line("markers", f"{signature}: {text}")
    config.addinivalue_line(
        "markers",
        f"{TASKS_MARKER}(which): the tasks a suite runs on, one of "
        f"{', '.join(map(repr, task_sets()))} (the kinds' task sets)",
    )
    for name, text in suite_markers().items():  # one per bundled suite: -m "validity or realism"
        config.addinivalue_line("markers", f"{name}: {text}")
    if not config.pluginmanager.hasplugin("xdist"):  # the task marker must not warn without xdist
        config.addinivalue_line("markers", "xdist_group(name): run together under --dist loadgroup")


def pytest_unconfigure(config: pytest.Config) -> None:
    faults.restore_sigterm(config)


def pytest_report_header(config: pytest.Config) -> str | None:
    session = config.stash.get(session_key, None)
    if session is None:
        return None
    baseline = f", baseline {session.baseline.source}" if session.baseline else ""
    domains = ", ".join(session.domain_names()) or "none"
    if session.broken_domains:
        domains += f" ({len(session.broken_domains)} could not be loaded: {', '.join(session.broken_domains)})"
    cache = "off" if session.cache.directory is None else str(session.cache.directory)
    views = f", views {', '.join(sorted(v.value for v in session.views))}" if session.views else ""
    known = session.adapter.kinds  # where the adapter says before cf_method runs; else the summary does
    kinds = f", kinds {', '.join(sorted(k.value for k in known))}" if known else ""
    return (
        f"cfcheck: method {session.adapter.spec}{kinds}, profile {session.profile.name} "
        f"(seeds {list(session.seeds)}, timeout {session.profile.timeout:g} s/call), domains {domains}, "
        f"device {session.device}, cache {cache}{baseline}{views}"
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark a suite's test with its suite's marker (:func:`suite_markers`), so ``-m`` selects suites."""
    marker = suite_marker(item.path)
    if marker is not None:
        item.add_marker(marker)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise a suite through its kind's specification (the kind marker)."""
    session = metafunc.config.stash.get(session_key, None)
    if session is None:
        for name in ("cfcheck_task", "cfcheck_domain_spec", *kind_fixtures()):
            if name in metafunc.fixturenames:  # suites collected without --method: skip them
                metafunc.parametrize(name, [])
        if CONTRACT_FIXTURE in metafunc.fixturenames:
            parametrize_contract(metafunc, None, KIND_MARKER, DOMAIN_FIXTURE)
        return
    if "cfcheck_domain_spec" in metafunc.fixturenames:
        names = [*session.domain_names(), *session.broken_domains]
        metafunc.parametrize("cfcheck_domain_spec", names, ids=names)
    if CONTRACT_FIXTURE in metafunc.fixturenames:  # the contract: per kind, the method for its first domain
        parametrize_contract(metafunc, session, KIND_MARKER, DOMAIN_FIXTURE)
        return
    marker = metafunc.definition.get_closest_marker(KIND_MARKER)
    if "cfcheck_task" not in metafunc.fixturenames:
        if marker is not None:  # a kind's test without tasks: the method for the kind's first domain
            _parametrize_method_domain(metafunc, session, session.domains_for(marker.args[0])[0])
        return
    if marker is None:
        kinds = ", ".join(repr(k.value) for k in MethodKind)
        raise ValueError(
            f"{metafunc.definition.nodeid} uses cfcheck_task but has no kind: mark it (or its module) with "
            f"@pytest.mark.cfcheck_kind(kind), kind one of {kinds}"
        )
    from cfcheck.kinds import kind_spec

    domains, reason = session.domains_for(marker.args[0])
    if not domains:
        metafunc.parametrize(
            "cfcheck_task",
            [pytest.param(None, id="no-domain", marks=pytest.mark.skip(reason=reason or "no domain is selected"))],
        )
        return
    unusable = session.unusable_domains_for(marker.args[0])
    with_unusable = cast(pytest.Metafunc, WithUnusableDomains(metafunc, unusable))  # a Metafunc in all it is used as
    kind_spec(marker.args[0]).parametrize(with_unusable, session, domains)
    _parametrize_method_domain(metafunc, session, domains)


def _parametrize_method_domain(metafunc: pytest.Metafunc, session: CfcheckSession, domains: list[Domain]) -> None:
    """Build the method once per domain: each test's ``cfcheck_domain`` (session-scoped, so a method
    fixture at any scope may request it) is its task's domain, the run's default method domain
    unparametrised and any other one by a parameter (pairs of a task with another domain are dropped
    in pytest_collection_modifyitems); a test without a task (the contract) gets its kind's first
    domain, the one it draws inputs from."""
    if DOMAIN_FIXTURE not in metafunc.fixturenames or not domains:
        return
    chosen = domains if "cfcheck_task" in metafunc.fixturenames else domains[:1]
    names = [domain.name for domain in chosen]
    if names != [session.default_method_domain()]:  # the unparametrised fixture gives the default domain
        metafunc.parametrize(DOMAIN_FIXTURE, chosen, indirect=True, scope="session", ids=names)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the suites of kinds the method does not implement, where its kinds are known
    before any fixture runs (see :func:`cfcheck.adapter.declared_kinds`; otherwise those suites
    skip at setup with the same reason), and the tests of other shards."""
    cf_session = config.stash.get(session_key, None)
    if cf_session is None:
        return
    items[:] = [item for item in items if domain_matches_task(item)]
    if cf_session.adapter.kinds is not None:
        from cfcheck.kinds import view_source

        known = cf_session.adapter.kinds
        kinds = {k.value for k in known | {v for v in cf_session.views if view_source(known, v) is not None}}
        other = [i for i in items if (m := i.get_closest_marker(KIND_MARKER)) is not None and m.args[0] not in kinds]
        if other:
            _deselect(config, items, other)
            names = sorted({m.args[0] for item in other if (m := item.get_closest_marker(KIND_MARKER)) is not None})
            cf_session.deselected = (
                f"{len(other)} tests of the {', '.join(names)} suites deselected: "
                f"the method implements {', '.join(sorted(kinds))}"
            )
    if cf_session.shard is not None:
        from cfcheck.core.sharding import assign_groups

        groups = {item.nodeid: _shard_group(item) for item in items}
        sizes = Counter(groups.values())
        assignment = assign_groups(sizes, cf_session.shard.count)
        _deselect(config, items, [i for i in items if assignment[groups[i.nodeid]] != cf_session.shard.index])


def _shard_group(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    task = callspec.params.get("cfcheck_task") if callspec is not None else None
    return task.group if task is not None else "tests without a task"


def _deselect(config: pytest.Config, items: list[pytest.Item], dropped: list[pytest.Item]) -> None:
    config.hook.pytest_deselected(items=dropped)
    gone = {id(item) for item in dropped}
    items[:] = [item for item in items if id(item) not in gone]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    cf_session = session.config.stash.get(session_key, None)
    if cf_session is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the records to the controller
        hand_to_controller(
            cf_session, workeroutput, getattr(session.config, "workerinput", {}).get("workerid", "worker")
        )
        return
    if session.config.option.collectonly:  # nothing ran: the last scorecard stays as it was
        return
    interrupted = exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
    stopped = session.shouldstop or session.shouldfail  # -x, --maxfail or a usage error: tests did not run
    complete = not interrupted and not stopped
    if complete and not cf_session.records and cf_session.shard is None:  # scored nothing: the last one stays
        return
    cf_session.write_scorecard(complete=complete, config=session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    output = getattr(node, "workeroutput", {})
    if any(output.get(key) for key in WORKER_OUTPUT):
        merge_from_worker(node.config.stash[session_key], output)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(session_key, None)
    if session is None:
        return
    terminalreporter.section("cfcheck")
    for line in summary_lines(session, exitstatus, config):
        terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """A test whose task has no counterfactuals fails (a failure, not a setup error) with the
    fault, without running its body."""
    fault = pyfuncitem.stash.get(faults.fault_key, None)
    if fault is not None:  # (no __tracebackhide__: with every frame hidden pytest adds a hint line)
        pytest.fail(fault, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Time the method's own calls inside the test, so its task's scoring time excludes them."""
    cf_session = item.config.stash.get(session_key, None)
    if cf_session is None:
        return (yield)
    spent = cf_session.costs.time_of_call()
    try:
        return (yield)
    except KeyError as error:
        from cfcheck.models.zoo import MissingRole

        if isinstance(error, MissingRole):  # the domain lacks a model the suite needs: skip, saying which
            pytest.skip(str(error))
        raise
    finally:
        item.user_properties += spent()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A cfcheck failure message (``pytest.fail(..., pytrace=False)``) raised while handling
    another exception reads as that message alone, without the "During handling of the above
    exception" chain."""
    cf_session = item.config.stash.get(session_key, None)
    if call.excinfo is not None and cf_session is not None:
        error = call.excinfo.value
        if isinstance(error, pytest.fail.Exception) and not error.pytrace:
            error.__suppress_context__ = True
            faults.record_fault_raised_by_test(item, cf_session, error.__context__)
    yield
