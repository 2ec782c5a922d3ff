"""Loading the method under test from ``--method``.

Three spellings are accepted, all resolved once at configure time so a typo is a
``pytest.UsageError`` before anything is collected:

- ``mymodule`` / ``pkg.mod``: an importable module, registered as a pytest plugin; it must
  define a fixture named ``cf_method`` (which may request cfcheck's fixtures);
- ``path/to/adapter.py``: the same, loaded from a file;
- ``pkg.mod:attr``: an object (or a zero-argument factory) to use as the method directly.

Reports are filed under the module's last name part (the file's stem), or under the adapter's
module-level ``cfcheck_name = "..."`` where it sets one.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from cfcheck.kinds import protocols
from cfcheck.kinds.protocols import KindDetection, MethodKind, detect_kinds, expected_interface

FIXTURE_NAME = "cf_method"
PLUGIN_NAME = "cfcheck-method-under-test"

ADAPTER_EXAMPLE = """\
    import pytest

    class MyMethod:
        def explain(self, x, target, classifier):
            ...
            return x_cf

    @pytest.fixture
    def cf_method():
        return MyMethod()"""


@dataclass(frozen=True)
class MethodSpec:
    """What ``--method`` named, resolved to a plugin module."""

    spec: str  # as given on the command line
    name: str  # short slug for reports and cache keys
    module: ModuleType
    #: the kinds the method implements where known before any fixture runs, else None
    kinds: frozenset[MethodKind] | None = None
    #: for ``pkg.mod:attr``, the method object and what detection found on it when it was loaded
    #: (the run reuses it rather than detecting again)
    detected: tuple[object, KindDetection] | None = field(default=None, compare=False, repr=False)


def load_method(spec: str, rootdir: Path) -> MethodSpec:
    """Resolve ``spec`` to a module defining ``cf_method``; UsageError on any problem."""
    spec = spec.strip()
    if not spec:
        raise pytest.UsageError("--method is empty; expected a module name, a .py path or pkg.mod:attr")
    if ":" in spec and not _looks_like_path(spec.split(":", 1)[0]):
        module_name, attr = spec.split(":", 1)
        module = _import_module(module_name, spec)
        adapter, method, detection = _object_adapter(module, attr, spec)
        found = frozenset(kind for kind, _ in detection[0])
        return MethodSpec(spec, _slug(f"{module_name}-{attr}"), adapter, found, detected=(method, detection))
    if _looks_like_path(spec):
        path = Path(spec)
        if not path.is_absolute():
            path = (Path.cwd() / path) if (Path.cwd() / path).exists() else rootdir / path
        module = _import_path(path, spec)
        name = path.stem
    else:
        module = _import_module(spec, spec)
        name = spec.rsplit(".", 1)[-1]
    if not hasattr(module, FIXTURE_NAME):
        raise pytest.UsageError(
            f"--method={spec}: {module.__name__} defines no fixture named '{FIXTURE_NAME}'. "
            f"An adapter module looks like:\n{ADAPTER_EXAMPLE}\n"
            f"or name an object directly with --method=package.module:attribute"
        )
    try:
        kinds = declared_kinds(module)
    except ValueError as error:
        raise pytest.UsageError(f"--method={spec}: {error}") from None
    return MethodSpec(spec, _slug(_report_name(module, name, spec)), module, kinds)


def _report_name(module: ModuleType, default: str, spec: str) -> str:
    """An adapter's ``cfcheck_name`` (the name its reports are filed under), else ``default``."""
    declared = getattr(module, "cfcheck_name", None)
    if declared is None:
        return default
    if not isinstance(declared, str) or not declared.strip():
        raise pytest.UsageError(
            f"--method={spec}: {module.__name__}.cfcheck_name must be a non-empty str, got {declared!r}"
        )
    return declared


def declared_kinds(module: ModuleType) -> frozenset[MethodKind] | None:
    """The kinds an adapter module's method implements, where they can be known without
    running its fixture: a module-level ``cfcheck_kind = "scm"`` (or a tuple), else the class
    named by the ``cf_method`` fixture's return annotation. None when neither says."""
    declared = getattr(module, "cfcheck_kind", None)
    if declared is not None:
        holder = type("Declared", (), {"cfcheck_kind": declared})
        return detect_kinds(holder)
    fixture = getattr(module, FIXTURE_NAME, None)
    function = getattr(fixture, "_get_wrapped_function", lambda: getattr(fixture, "__wrapped__", fixture))()
    try:
        annotation = typing.get_type_hints(function).get("return")
    except Exception:  # an annotation that does not resolve says nothing
        return None
    if isinstance(annotation, type) and annotation is not object:
        return detect_kinds(annotation) or None
    return None


def check_method_object(
    method: Any, spec: str, detect: Callable[[object], KindDetection] | None = None
) -> KindDetection:
    """What the object returned by ``cf_method`` implements (:func:`~cfcheck.kinds.protocols.kind_detection`,
    or ``detect`` where the caller keeps what was found); UsageError when it implements no known kind."""
    __tracebackhide__ = True
    try:
        detection = detect(method) if detect is not None else protocols.kind_detection(method)
    except ValueError as error:
        raise pytest.UsageError(f"--method={spec}: {error}") from None
    if not detection[0]:
        raise pytest.UsageError(
            f"--method={spec}: the '{FIXTURE_NAME}' fixture returned {type(method).__name__!s} "
            f"({method!r:.80}), which implements no method kind; expected {expected_interface()}"
        )
    return detection


def _looks_like_path(text: str) -> bool:
    return text.endswith(".py") or "/" in text or "\\" in text


def _import_module(module_name: str, spec: str) -> ModuleType:
    """``import module_name``; where its top-level package is not importable, once more with the
    working directory on ``sys.path``, as ``python -m pytest`` has it and the ``pytest`` command does not."""
    try:
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            folder = str(Path.cwd())
            if error.name != module_name.split(".")[0] or folder in sys.path:
                raise
            sys.path.insert(0, folder)
            return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise pytest.UsageError(
                f"--method={spec}: no module named {module_name!r} (is it installed, or on sys.path? "
                f"a file can be given as --method=path/to/adapter.py)"
            ) from None
        raise _import_failed(spec, module_name, error) from None
    except Exception as error:  # noqa: BLE001 - whatever the user's module raises while it imports
        raise _import_failed(spec, module_name, error) from None


def _import_failed(spec: str, module: str, error: BaseException) -> pytest.UsageError:
    """The usage error for a method module that raised while importing: the module, the error, and
    the line of the user's code it came from (the last frame outside importlib)."""
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if "importlib" not in f.filename]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    missing = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
    hint = f" (the package {missing!r} is not installed in this environment)" if missing else ""
    return pytest.UsageError(
        f"--method={spec}: importing {module} failed{where}: {type(error).__name__}: {error}{hint}"
    )


def _import_path(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise pytest.UsageError(f"--method={spec}: file {path} does not exist")
    module_name = f"cfcheck_method_{_slug(path.stem)}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise pytest.UsageError(f"--method={spec}: cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))  # so the adapter can import its neighbours
    try:
        loader_spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - whatever the user's file raises while it runs
        del sys.modules[module_name]
        raise _import_failed(spec, str(path), error) from None
    return module


def _object_adapter(module: ModuleType, attr: str, spec: str) -> tuple[ModuleType, Any, KindDetection]:
    """A synthetic plugin module whose ``cf_method`` fixture returns ``module.attr``, the method
    object and what it implements (detected once, here)."""
    try:
        target = module
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise pytest.UsageError(f"--method={spec}: {module.__name__} has no attribute {attr!r}") from None
    method = target
    if isinstance(target, type) or (callable(target) and not detect_kinds(target)):
        method = target()  # a class or a factory: build the method once

    def cf_method() -> Any:
        return method

    adapter = ModuleType(f"cfcheck_object_adapter_{_slug(spec)}")
    adapter.cf_method = pytest.fixture(name=FIXTURE_NAME)(cf_method)  # type: ignore[attr-defined]
    detection = check_method_object(method, spec)
    return adapter, method, detection


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "method"
