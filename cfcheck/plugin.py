"""The cfcheck pytest plugin: options, the session object, fixtures and reporting hooks.

Registered through the ``pytest11`` entry point, so ``pytest --method=mymodule`` works from any
directory once cfcheck is installed. Without ``--method`` the plugin stays out of the way.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck import faults
from cfcheck.adapter import FIXTURE_NAME, PLUGIN_NAME, check_method_object, load_method
from cfcheck.kinds import MethodKind, detect_kinds
from cfcheck.profiles import INCONCLUSIVE_OUTCOMES, PROFILE_NAMES, read_user_settings, resolve_profile

if TYPE_CHECKING:  # torch and the models load only when a method is under test
    import torch

    from cfcheck.generation import VCEResult
    from cfcheck.scoring import ScoreRecorder
    from cfcheck.session import CfcheckSession
    from cfcheck.tasks import VCETask

session_key = pytest.StashKey["CfcheckSession | None"]()
_usage_error_key = pytest.StashKey[str]()

KIND_MARKER = "cfcheck_kind"
TASKS_MARKER = "cfcheck_tasks"


def pytest_addoption(parser: pytest.Parser) -> None:
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{KIND_MARKER}(kind): the method kind a cfcheck suite applies to")
    config.addinivalue_line(
        "markers", f"{TASKS_MARKER}(which): 'explained', 'random' or 'cascade' (randomised-layer) classifier tasks"
    )
    if not config.pluginmanager.hasplugin("xdist"):  # the task marker must not warn without xdist
        config.addinivalue_line("markers", "xdist_group(name): run together under --dist loadgroup")
    try:
        settings = read_user_settings(config.rootpath)
        profile_name = config.getoption("cfcheck_profile") or settings.get("profile", "standard")
        profile = resolve_profile(profile_name, settings)
        if config.getoption("cfcheck_inconclusive"):
            profile = dataclasses.replace(profile, inconclusive=config.getoption("cfcheck_inconclusive"))
    except ValueError as error:
        if not config.getoption("method"):
            # without --method cfcheck is inert: a bad [tool.cfcheck] must not break ordinary runs
            config.stash[session_key] = None
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(f"cfcheck: {error} (ignored: cfcheck runs only with --method)"),
                stacklevel=2,
            )
            return
        raise pytest.UsageError(f"cfcheck: {error}") from None
    spec = config.getoption("method")
    if not spec:
        config.stash[session_key] = None
        return
    method = load_method(spec, config.rootpath)
    config.pluginmanager.register(method.module, PLUGIN_NAME)
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        import cfcheck.suites  # run the bundled suites unless the user named paths

        config.args[:] = [str(Path(cfcheck.suites.__file__).parent)]
    from cfcheck.baseline import Baseline
    from cfcheck.session import CfcheckSession

    baseline_path = config.getoption("cfcheck_baseline")
    try:
        baseline = Baseline.load(baseline_path) if baseline_path else None
    except (FileNotFoundError, ValueError) as error:
        raise pytest.UsageError(f"--cfcheck-baseline: {error}") from None
    _share_cpu_between_xdist_workers(config)
    report_dir = config.getoption("cfcheck_report_dir")
    config.stash[session_key] = cf_session = CfcheckSession(
        method=method,
        profile=profile,
        device=_resolve_device(config.getoption("cfcheck_device")),
        seed=config.getoption("cfcheck_seed"),
        report_dir=report_dir if report_dir.is_absolute() else config.invocation_params.dir / report_dir,
        baseline=baseline,
        save_baseline=config.getoption("cfcheck_save_baseline"),
    )
    config.pluginmanager.register(_OutcomeCounter(cf_session), "cfcheck-outcomes")
    faults.stop_on_sigterm(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    faults.restore_sigterm(config)


def pytest_report_header(config: pytest.Config) -> str | None:
    session = config.stash.get(session_key, None)
    if session is None:
        return None
    baseline = f", baseline {session.baseline.source}" if session.baseline else ""
    return (
        f"cfcheck: method {session.method.spec}, profile {session.profile.name} "
        f"(n={session.profile.n_per_source}/class, seeds {list(session.seeds)}), "
        f"device {session.device}{baseline}"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    session = metafunc.config.stash.get(session_key, None)
    if session is None:
        for name in ("cfcheck_oracle", "cfcheck_attribute", "cfcheck_task"):
            if name in metafunc.fixturenames:  # suites collected without --method: skip them
                metafunc.parametrize(name, [])
        return
    from cfcheck.tasks import RANDOM_CLASSIFIER, TRAINED_COUNTERPART

    if "cfcheck_oracle" in metafunc.fixturenames:
        metafunc.parametrize("cfcheck_oracle", session.zoo.oracles)
    if "cfcheck_attribute" in metafunc.fixturenames:
        unrelated = sorted(a for a in session.zoo.attribute_oracles if a != "digit")
        metafunc.parametrize("cfcheck_attribute", unrelated)
    if "cfcheck_task" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(TASKS_MARKER)
    which = marker.args[0] if marker else "explained"
    if which == "random":
        classifiers: tuple[str, ...] = (RANDOM_CLASSIFIER,)
    elif which == "cascade":
        classifiers = session.zoo.randomisation_stages(TRAINED_COUNTERPART)
    else:
        classifiers = session.profile.classifiers
    # With ``-n N --dist loadgroup`` all tests of a task share one worker, so its
    # counterfactuals are generated once rather than once per worker.
    tasks = [
        pytest.param(task, id=task.id.replace("/", "-"), marks=pytest.mark.xdist_group(task.id))
        for task in session.tasks(tuple(classifiers))
    ]
    metafunc.parametrize("cfcheck_task", tasks)


class _OutcomeCounter:
    """Counts test outcomes for the scorecard (on the xdist controller, which sees all reports)."""

    def __init__(self, session: CfcheckSession) -> None:
        self.outcomes = session.outcomes

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and report.when != "call":
            self.outcomes["error"] += 1
        elif report.when == "call" or report.skipped:
            self.outcomes[report.outcome] += 1


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    cf_session = session.config.stash.get(session_key, None)
    if cf_session is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the records to the controller
        workeroutput["cfcheck_records"] = cf_session.serialize_records()
        return
    interrupted = exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
    cf_session.write_scorecard(complete=not interrupted and not session.shouldstop)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    records = getattr(node, "workeroutput", {}).get("cfcheck_records")
    if records:
        node.config.stash[session_key].merge_records(records)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(session_key, None)
    if session is None:
        return
    terminalreporter.section("cfcheck")
    counts = {v: sum(1 for r in session.records if r.verdict == v) for v in ("pass", "fail", "inconclusive", "error")}
    regressed = sum(1 for r in session.records if r.regressed)
    terminalreporter.write_line(
        f"{len(session.records)} scores recorded: {counts['pass']} passed, {counts['fail']} failed, "
        f"{counts['inconclusive']} inconclusive, {counts['error']} could not be computed, "
        f"{len(session.records) - sum(counts.values())} without a bar; {regressed} regressed"
    )
    if session.scorecard_path is not None:
        incomplete = ""
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            cause = "SIGTERM" if config.stash.get(faults.sigterm_received_key, False) else "interrupted"
            incomplete = f" (incomplete: {cause})"
        terminalreporter.write_line(f"scorecard: {session.scorecard_path}{incomplete}")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """A test whose task has no counterfactuals fails (a failure, not a setup error) with the
    fault, without running its body."""
    fault = pyfuncitem.stash.get(faults.fault_key, None)
    if fault is not None:  # (no __tracebackhide__: with every frame hidden pytest adds a hint line)
        pytest.fail(fault, pytrace=False)


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


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def cfcheck_session(pytestconfig: pytest.Config) -> CfcheckSession:
    """The run's cfcheck session (profile, cache, records)."""
    session = pytestconfig.stash.get(session_key, None)
    if session is None:
        pytest.skip("no method under test: run pytest --method=yourmodule")
    return session


@pytest.fixture(scope="session")
def cfcheck_device(cfcheck_session: CfcheckSession) -> torch.device:
    return cfcheck_session.device


@pytest.fixture(scope="session")
def cfcheck_seed(cfcheck_session: CfcheckSession) -> int:
    return cfcheck_session.seed


@pytest.fixture(scope="session")
def cfcheck_profile(cfcheck_session: CfcheckSession) -> Any:
    return cfcheck_session.profile


@pytest.fixture(scope="session")
def cfcheck_domain(cfcheck_session: CfcheckSession) -> Any:
    """The reference domain (morpho): ``.split(name, n)``, ``.true_counterfactual(...)``."""
    return cfcheck_session.domain


@pytest.fixture(scope="session")
def cfcheck_models(cfcheck_session: CfcheckSession) -> Any:
    """The explained classifiers a method may load (``cfcheck_models["robust_cnn"]``); the
    evaluation models (oracles, attribute oracles, embedding) are refused with a KeyError."""
    from cfcheck.zoo import MethodModels

    return MethodModels(cfcheck_session.zoo)


@pytest.fixture(scope="session")
def cfcheck_evaluation_models(cfcheck_session: CfcheckSession) -> Any:
    """Every reference model of the domain, for the suites that score a method."""
    return cfcheck_session.zoo


@pytest.fixture
def cfcheck_method(request: pytest.FixtureRequest, cfcheck_session: CfcheckSession) -> Any:
    """The method under test, skipped when it does not implement the suite's kind."""
    __tracebackhide__ = True
    previous = request.config.stash.get(_usage_error_key, None)
    if previous is not None:
        pytest.fail(previous, pytrace=False)
    method = request.getfixturevalue(FIXTURE_NAME)
    try:
        check_method_object(method, cfcheck_session.method.spec)
    except pytest.UsageError as error:
        # Every cfcheck test would fail the same way: say it once and stop the session.
        request.config.stash[_usage_error_key] = str(error)
        request.session.shouldfail = f"cfcheck usage error: {error}"
        raise
    marker = request.node.get_closest_marker(KIND_MARKER)
    if marker is not None:
        required = MethodKind(marker.args[0])
        kinds = detect_kinds(method)
        if required not in kinds:
            implemented = ", ".join(sorted(k.value for k in kinds))
            pytest.skip(f"suite for {required.value} methods; {type(method).__name__} implements {implemented}")
    return method


@pytest.fixture
def cfcheck_vce(
    request: pytest.FixtureRequest, cfcheck_session: CfcheckSession, cfcheck_method: Any, cfcheck_task: VCETask
) -> VCEResult:
    """Counterfactuals of the method for this test's task (generated once per session)."""
    __tracebackhide__ = True
    from cfcheck.generation import MethodOutputError

    try:
        return cfcheck_session.counterfactuals(
            cfcheck_task, cfcheck_method, _progress_writer(request.config), requester=faults.node_label(request.node)
        )
    except MethodOutputError as error:
        fault = error
    # The test fails in its call phase (pytest_pyfunc_call), so it counts as a failure; the
    # scorecard records it, so a suite never silently goes missing.
    faults.record_fault(request.node, cfcheck_session, fault.summary)
    request.node.stash[faults.fault_key] = str(fault)
    return faults.NoCounterfactuals(str(fault))  # type: ignore[return-value]


@pytest.fixture
def cfcheck_score(request: pytest.FixtureRequest, cfcheck_session: CfcheckSession) -> ScoreRecorder:
    """Record a score and assert its threshold: ``cfcheck_score("target_accuracy", hits)``."""
    from cfcheck.scoring import ScoreRecorder

    return ScoreRecorder(cfcheck_session, request.node)


def _progress_writer(config: pytest.Config) -> Any:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        return None

    def write(text: str) -> None:
        with capture.global_and_fixture_disabled() if capture else nullcontext():
            reporter.write_line(f"cfcheck: {text}")

    return write


def _share_cpu_between_xdist_workers(config: pytest.Config) -> None:
    """Give each pytest-xdist worker its share of the cores: N workers each running torch's
    default thread pool oversubscribe the CPU and run many times slower."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and hasattr(config, "workerinput"):
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


def _resolve_device(name: str) -> torch.device:
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
