"""The fixtures cfcheck gives suites and method adapters (registered by :mod:`cfcheck.plugin`)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import pytest

from cfcheck import faults
from cfcheck.adapter import FIXTURE_NAME, check_method_object
from cfcheck.kinds.protocols import MethodKind, view_source

if TYPE_CHECKING:  # torch and the models load only when a method is under test
    import torch

    from cfcheck.kinds.base import Task
    from cfcheck.scoring import ScoreRecorder
    from cfcheck.session import CfcheckSession

session_key = pytest.StashKey["CfcheckSession | None"]()
_usage_error_key = pytest.StashKey[str]()
KIND_MARKER = "cfcheck_kind"


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
def cfcheck_domain(request: pytest.FixtureRequest, cfcheck_session: CfcheckSession) -> Any:
    """The domain of the test's task (``.split(name, n)``, ``.model_roles``, ``.capabilities``).

    Session-scoped per domain: in a run over several domains each test receives its task's domain
    (the plugin parametrises this fixture by it), so a method fixture that requests it, at any
    scope, is built once per domain and only ever called on that domain's tasks."""
    domain = getattr(request, "param", None)  # None where the plugin did not parametrise it
    return domain if domain is not None else cfcheck_session.domain(_default_domain(cfcheck_session))


@pytest.fixture(scope="session")
def cfcheck_models(cfcheck_session: CfcheckSession, cfcheck_domain: Any) -> Any:
    """The models of the test's domain a method may load (``cfcheck_models["robust_cnn"]``): its
    explained classifiers and generative priors; the evaluation models (oracles, attribute oracles,
    embedding) are refused with a KeyError."""
    from cfcheck.models.zoo import MethodModels

    return MethodModels(cfcheck_session.zoo(cfcheck_domain))


@pytest.fixture
def cfcheck_evaluation_models(request: pytest.FixtureRequest, cfcheck_session: CfcheckSession) -> Any:
    """Every model of the test's domain, for the suites that score a method."""
    return cfcheck_session.zoo(_test_domain(request, cfcheck_session))


#: the fixture the plugin parametrises by the task's domain in a run over several domains
DOMAIN_FIXTURE = "cfcheck_domain"


def _test_domain(request: pytest.FixtureRequest, session: CfcheckSession) -> Any:
    """The test's domain (the object): its task's, else the one ``cfcheck_domain`` gives by default."""
    callspec = getattr(request.node, "callspec", None)
    task = callspec.params.get("cfcheck_task") if callspec is not None else None
    return task.domain if task is not None else session.domain(_default_domain(session))


def _default_domain(session: CfcheckSession) -> str:
    """The method's default domain (:meth:`CfcheckSession.default_method_domain`), else the run's first."""
    name = session.default_method_domain() or next(iter(session.domain_names()), None)
    if name is None:
        pytest.skip("the run has no domain (see the domain errors above)")
    return name


@pytest.fixture
def cfcheck_method(request: pytest.FixtureRequest, cfcheck_session: CfcheckSession, cfcheck_domain: Any) -> Any:
    """The method under test, skipped when it does not implement the suite's kind.

    Function-scoped: it decides per test (by the test's kind marker) whether the method runs, runs
    through a view or is skipped, and the user's ``cf_method`` may be function-scoped too. What the
    method implements is detected once per run (:meth:`CfcheckSession.method_kinds`), not per test."""
    __tracebackhide__ = True
    previous = request.config.stash.get(_usage_error_key, None)
    if previous is not None:
        pytest.fail(previous, pytrace=False)
    from cfcheck.core.answer_reads import method_code

    with method_code(cfcheck_session.answer_reads):  # the adapter's fixture is the method's code
        method = request.getfixturevalue(FIXTURE_NAME)
    try:
        found, ignored = check_method_object(method, cfcheck_session.adapter.spec, detect=cfcheck_session.method_kinds)
    except pytest.UsageError as error:
        # Every cfcheck test would fail the same way: say it once and stop the session.
        request.config.stash[_usage_error_key] = str(error)
        request.session.shouldfail = f"cfcheck usage error: {error}"
        raise
    if cfcheck_session.kind_reasons is None:
        cfcheck_session.kind_reasons = [f"{kind.value}: {why}" for kind, why in found] + [
            f"not taken: {why}" for why in ignored
        ]
    marker = request.node.get_closest_marker(KIND_MARKER)
    if marker is not None:
        required = MethodKind(marker.args[0])
        kinds = frozenset(kind for kind, _ in found)
        if required not in kinds:
            if required in cfcheck_session.views and view_source(kinds, required) is not None:
                domain = _test_domain(request, cfcheck_session).name
                return cfcheck_session.memo(
                    ("view", required, domain), lambda: _view(method, required, kinds, cfcheck_session)
                )
            implemented = ", ".join(sorted(k.value for k in kinds))
            hint = (
                f" (--cfcheck-view {required.value} scores it through its view as one)"
                if view_source(kinds, required) is not None
                else ""
            )
            unmatched = "".join(f"; {why}" for why in ignored if f"not the {required.value} call" in why)
            pytest.skip(
                f"suite for {required.value} methods; {type(method).__name__} implements {implemented}{hint}{unmatched}"
            )
    return method


def _view(method: Any, kind: MethodKind, implemented: frozenset[MethodKind], session: CfcheckSession) -> Any:
    """``method`` (implementing the kinds ``implemented``) seen as ``kind``; its cache fingerprint
    covers the method and the view's code."""
    from cfcheck.core.cache import method_fingerprint
    from cfcheck.kinds import view_as

    view: Any = view_as(method, kind, implemented)  # any object: the view's class is the kind's
    view.cfcheck_version = (
        f"view {type(view).__name__} {method_fingerprint(view, None)} of "
        f"{method_fingerprint(method, session.adapter.module)}"
    )
    return view


@pytest.fixture
def cfcheck_result(
    request: pytest.FixtureRequest, cfcheck_session: CfcheckSession, cfcheck_method: Any, cfcheck_task: Task
) -> Any:
    """The method's outputs for this test's task, as its kind's result object (generated once
    per session, or read from the persistent cache)."""
    __tracebackhide__ = True
    from cfcheck.kinds.calling import MethodOutputError

    try:
        return cfcheck_session.outputs(
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
