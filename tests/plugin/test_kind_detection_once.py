"""What a method implements is detected once per run (:meth:`cfcheck.session.CfcheckSession.method_kinds`),
not on every test: the detector is counted through a whole run, with a ``cf_method`` fixture that
builds a new object for every test and with an object ``--method=module:attribute`` names."""

from __future__ import annotations

import functools

import pytest

from cfcheck.kinds import protocols
from cfcheck.session import kinds_follow_from_class

EXPLAINER = """
import pytest

class Halving:
    def explain(self, x, target, classifier, generator=None):
        return (x * 0.5 + 0.25).clone()

METHOD = Halving()

@pytest.fixture
def cf_method():
    return Halving()  # function-scoped: a new object for every test
"""

#: the contract suite (every kind's test asks for the method; the other kinds' skip) and two VCE suites
SELECTION = ("-p", "no:randomly", "-rs", "-k", "test_contract or (vce and (test_target_accuracy or test_coverage))")


@pytest.fixture
def detections(monkeypatch):
    """The class name of every object the kind detector is run on in this test (every caller reaches
    the detector through its module: :func:`cfcheck.kinds.protocols.detect_kinds`, the adapter's
    check, the session's cache)."""
    seen: list[str] = []
    original = protocols.kind_detection

    @functools.wraps(original)
    def counted(method: object) -> protocols.KindDetection:
        seen.append(type(method).__name__)
        return original(method)

    monkeypatch.setattr(protocols, "kind_detection", counted)
    return seen


def _ran_with_the_method(result) -> int:
    """Tests that received the method (run, or skipped by cfcheck_method for another kind's suite)."""
    outcomes = result.parseoutcomes()
    return outcomes.get("passed", 0) + outcomes.get("failed", 0) + outcomes.get("skipped", 0)


def test_a_fixture_method_is_detected_once_per_run(tiny, detections):
    tiny.makepyfile(explainer=EXPLAINER)
    result = tiny.runpytest("--method=explainer", *SELECTION)
    assert _ran_with_the_method(result) >= 4, result.stdout.str()  # contract per kind, and the VCE suites
    result.stdout.fnmatch_lines(["*suite for scm methods; Halving implements vce*"])  # detection still decides
    result.stdout.fnmatch_lines(["*method kind vce: explain(x, target, classifier, generator=None) takes*"])
    assert detections == ["Halving"]


def test_an_object_named_on_the_command_line_is_detected_once_when_loaded(tiny, detections):
    tiny.makepyfile(explainer=EXPLAINER)
    result = tiny.runpytest("--method=explainer:METHOD", *SELECTION)
    assert _ran_with_the_method(result) >= 4, result.stdout.str()
    result.stdout.fnmatch_lines(["*method kind vce: explain(x, target, classifier, generator=None) takes*"])
    assert detections == ["Halving"]


class _ByClass:
    def explain(self, x, target, classifier): ...


class _DeclaredPerObject:
    def __init__(self) -> None:
        self.cfcheck_kind = "vce"  # another object of the class may declare another kind


class _Delegating:
    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class _CallAsProperty:
    @property
    def explain(self) -> object:
        return lambda x, target, classifier: x


@pytest.mark.parametrize(
    ("method", "by_class"),
    [
        (_ByClass(), True),
        (_DeclaredPerObject(), False),
        (_Delegating(_ByClass()), False),
        (_CallAsProperty(), False),
        (_ByClass, False),  # a class itself: what it implements is read off the class object
    ],
)
def test_kinds_are_kept_per_class_only_where_the_class_decides_them(method, by_class):
    assert kinds_follow_from_class(method) is by_class
