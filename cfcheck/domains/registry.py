"""Finding domains: by name, by import path, from a file, from installed packages and conftest hooks.

Every domain — the bundled ones included — reaches a run the same way:

- the ``cfcheck.domains`` entry-point group of installed distributions (``name = "pkg.mod:factory"``;
  cfcheck's own ``pyproject.toml`` registers morpho, gmm and glyphs there);
- the ``pytest_cfcheck_domains(config)`` hook, which a ``conftest.py`` or plugin implements to add
  domain objects (or specs) to the run;
- a spec given directly: ``--cfcheck-domain=pkg.module:factory``, ``--cfcheck-domain=path/to/file.py``
  (its module-level ``cfcheck_domain``) or ``path/to/file.py:factory``; ``[tool.cfcheck] domains =
  [...]`` lists the specs a project runs by default.

A spec names a :class:`~cfcheck.domains.base.Domain` instance, a class or a zero-argument
factory returning one. Whatever goes wrong while resolving one — the import, the factory, the
object it returns — is a :class:`DomainError` whose message names the spec, the file where there
is one, and what was expected; a run records it as that domain's failure and keeps the others.

Example:
    >>> from cfcheck.domains.registry import resolve_domain
    >>> resolve_domain("morpho").name
    'morpho'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from cfcheck.domains.answers import guard_answer_methods
from cfcheck.domains.base import SPLIT_ROLES, Domain

__all__ = [
    "DOMAIN_ATTRIBUTE",
    "ENTRY_POINT_GROUP",
    "DomainError",
    "check_domain",
    "forget_unregistered_domains",
    "registered_domains",
    "resolve_domain",
]

#: the entry-point group installed packages register their domains in
ENTRY_POINT_GROUP = "cfcheck.domains"
#: the module attribute a spec without ``:attribute`` (a .py file or a module) names
DOMAIN_ATTRIBUTE = "cfcheck_domain"


class DomainError(ValueError):
    """A domain could not be resolved, or what a spec resolved to is not a usable domain."""


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return found


def registered_domains() -> tuple[str, ...]:
    """Names of the domains installed packages register (``cfcheck.domains`` entry points), sorted."""
    return tuple(sorted(_entry_points()))


_RESOLVED: dict[str, Domain] = {}


def resolve_domain(spec: Any, rootdir: Path | None = None) -> Domain:
    """The domain ``spec`` names (one instance per spec and process).

    Args:
        spec: a registered name (``"morpho"``), ``"pkg.module:attribute"``, ``"path/file.py"`` or
            ``"path/file.py:attribute"`` (the attribute defaults to ``cfcheck_domain``), or a
            domain object, class or factory itself.
        rootdir: where a relative file path is looked up when it is not found from the working
            directory (pytest's rootdir).

    Returns:
        The checked domain object (:func:`check_domain`).

    Raises:
        DomainError: naming the spec, the file and what was expected.
    """
    if not isinstance(spec, str):
        domain = guard_answer_methods(check_domain(_instantiate(spec, repr(spec)), repr(spec)))
        _RESOLVED.setdefault(domain.name, domain)
        return domain
    text = spec.strip()
    if not text:
        raise DomainError("an empty domain spec; expected a registered name, pkg.module:factory or path/file.py")
    if text not in _RESOLVED:
        # a method that reads the domain's answer through it is noticed (cfcheck.domains.answers)
        domain = guard_answer_methods(check_domain(_instantiate(_load_target(text, rootdir), text), text))
        _RESOLVED[text] = domain
        _RESOLVED.setdefault(domain.name, domain)  # later lookups by its name find the same object
    return _RESOLVED[text]


def forget_unregistered_domains() -> None:
    """Drop every resolved domain that no installed package registers, so the next
    :func:`resolve_domain` of a user's spec builds it again: each pytest run resolves its domains
    afresh, and a second run in the same process (pytester, an IDE) sees a domain module or
    calibration folder that changed in between. Registered (bundled) domains are kept."""
    kept = {id(_RESOLVED[name]) for name in _entry_points() if name in _RESOLVED}
    for key in [key for key, domain in _RESOLVED.items() if id(domain) not in kept]:
        del _RESOLVED[key]


def _load_target(spec: str, rootdir: Path | None) -> Any:
    """The object a string spec points at (not yet instantiated)."""
    location, _, attribute = spec.partition(":") if not _is_windows_drive(spec) else (spec, "", "")
    if location.endswith(".py") or "/" in location or "\\" in location:
        module = _import_file(location, rootdir, spec)
        return _attribute(module, attribute or DOMAIN_ATTRIBUTE, spec, where=str(module.__file__))
    if not attribute and location in _entry_points():
        point = _entry_points()[location]
        try:
            return point.load()
        except Exception as error:  # noqa: BLE001 - reported with the entry point's name
            raise DomainError(
                f"domain {location!r}: its entry point {point.value!r} (group {ENTRY_POINT_GROUP}) failed to "
                f"import: {type(error).__name__}: {error}"
            ) from error
    if not attribute and "." not in location:
        known = ", ".join(registered_domains()) or "none"
        raise DomainError(
            f"unknown domain {location!r}; registered domains: {known}. A domain of your own is named as "
            "pkg.module:factory or path/to/domain.py[:factory]"
        )
    try:
        module = _import_module(location, rootdir)
    except Exception as error:  # noqa: BLE001 - any import failure is the user's to see
        raise DomainError(
            f"domain {spec!r}: cannot import module {location!r}: {type(error).__name__}: {error}"
        ) from error
    return _attribute(module, attribute or DOMAIN_ATTRIBUTE, spec, where=str(getattr(module, "__file__", location)))


def _import_module(location: str, rootdir: Path | None) -> Any:
    """``import location``; where its top-level package is not importable, once more with ``rootdir``
    (pytest's rootdir, or the working directory of a command) on ``sys.path``, as ``python -m`` would."""
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as error:
        folder = str(rootdir if rootdir is not None else Path.cwd())
        if error.name != location.split(".")[0] or folder in sys.path:
            raise
        sys.path.insert(0, folder)
        return importlib.import_module(location)


def _is_windows_drive(spec: str) -> bool:
    return len(spec) > 2 and spec[1] == ":" and spec[2] in "/\\"


def _import_file(location: str, rootdir: Path | None, spec: str) -> Any:
    path = Path(location)
    if not path.is_absolute() and not path.exists() and rootdir is not None:
        path = rootdir / path
    if not path.is_file():
        raise DomainError(
            f"domain {spec!r}: no such file {path}; expected a Python file defining a Domain object, "
            "class or zero-argument factory"
        )
    name = f"cfcheck_user_domain_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise DomainError(f"domain {spec!r}: {path} is not an importable Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - the user's file failed to run
        del sys.modules[name]
        raise DomainError(f"domain {spec!r}: importing {path} failed: {type(error).__name__}: {error}") from error
    return module


def _attribute(module: Any, attribute: str, spec: str, where: str) -> Any:
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise DomainError(
            f"domain {spec!r}: {where} has no attribute {attribute!r}; expected a Domain object, class or "
            f"zero-argument factory named {attribute!r}"
        ) from None


def _instantiate(target: Any, spec: str) -> Any:
    """A domain object from an object, a class or a factory."""
    if isinstance(target, type) or (callable(target) and not _looks_like_domain(target)):
        try:
            return target()
        except Exception as error:  # noqa: BLE001 - the factory is the user's code
            raise DomainError(f"domain {spec!r}: its factory raised {type(error).__name__}: {error}") from error
    return target


def _looks_like_domain(value: Any) -> bool:
    return hasattr(value, "split_roles") and hasattr(value, "model_roles")


def check_domain(domain: Any, spec: str) -> Domain:
    """``domain`` if it has what the engine reads off every domain, else a :class:`DomainError`
    that names the spec and each missing or malformed attribute."""
    problems: list[str] = []
    if not isinstance(domain, Domain):
        missing = [
            name
            for name in (
                "name",
                "input_shape",
                "num_classes",
                "class_names",
                "split_roles",
                "model_roles",
                "capabilities",
                "split",
            )
            if not hasattr(domain, name)
        ]
        raise DomainError(
            f"domain {spec!r} resolved to {type(domain).__name__}, not a cfcheck Domain: it lacks "
            f"{', '.join(missing) or 'the Domain protocol'} (see cfcheck.domains.base.Domain, or build one with "
            "cfcheck.domains.data.ImageDomain)"
        )
    name = getattr(domain, "name", None)
    if not isinstance(name, str) or not name or "/" in name or name.startswith(".") or name.strip() != name:
        problems.append(f"name must be a non-empty string without '/', got {name!r}")
    shape = getattr(domain, "input_shape", None)
    if not isinstance(shape, tuple) or not shape or not all(isinstance(s, int) and s > 0 for s in shape):
        problems.append(f"input_shape must be a tuple of positive ints (C, H, W), got {shape!r}")
    classes = getattr(domain, "num_classes", None)
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 2:
        problems.append(f"num_classes must be an int >= 2, got {classes!r}")
    roles = getattr(domain, "split_roles", None)
    if not isinstance(roles, Mapping):
        problems.append(f"split_roles must map role -> split name, got {type(roles).__name__}")
    else:
        missing = [role for role in SPLIT_ROLES if role not in roles]
        if missing:
            problems.append(f"split_roles lacks the roles {missing} (expected all of {list(SPLIT_ROLES)})")
    models = getattr(domain, "model_roles", None)
    if not isinstance(models, Mapping) or not all(isinstance(v, tuple) for v in models.values()):
        problems.append("model_roles must map role -> tuple of model names")
    if problems:
        raise DomainError(f"domain {spec!r}: " + "; ".join(problems))
    return domain


def spec_of(domain: Domain) -> str:
    """The spec this process resolved ``domain`` from (``pkg.mod:factory``, ``path.py``, ...), as a
    user types it again (``cfcheck calibrate --domain <spec>``); its name where it was resolved by name."""
    specs = [spec for spec, found in _RESOLVED.items() if found is domain]
    return next((spec for spec in specs if spec != domain.name), domain.name)


def known_domain(name: str) -> Domain | None:
    """The domain called ``name`` if this process has resolved it or a package registers it, else None
    (never raises: for readers such as the scorecard's views)."""
    if name in _RESOLVED:
        return _RESOLVED[name]
    if name in _entry_points():
        try:
            return resolve_domain(name)
        except DomainError:
            return None
    return None
