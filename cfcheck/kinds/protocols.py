"""Method kinds' calling protocols, and detecting which a method implements.

A method is any object; its kind is read from the methods it defines (duck typing), so a
researcher never subclasses anything from cfcheck. ``cfcheck_kind = "vce"`` (or a tuple) on the
object overrides detection when two kinds share a method name (``explain``).

Every call may take an optional RNG keyword (a seeded ``torch.Generator``: cfcheck passes one
when the signature accepts it; ``generator=`` unless the kind declares another) and may return
``(output, valid)``, where ``valid`` is a bool N-vector that is False where the method abstained.
The kinds, their calls, keywords and detectors are declared by the kinds themselves
(:mod:`cfcheck.kinds.registry`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, ClassVar

from cfcheck.kinds.declaration import KindDeclaration, resolve
from cfcheck.kinds.registry import DECLARATIONS


class _RegisteredKinds(type):
    """:class:`MethodKind`'s metaclass: the class iterates over the registered kinds (in their
    order), ``in`` asks the registry, and ``MethodKind.VCE`` is ``MethodKind("vce")``."""

    def __iter__(cls) -> Iterator[MethodKind]:
        return (MethodKind(name) for name in DECLARATIONS)

    def __len__(cls) -> int:
        return len(DECLARATIONS)

    def __contains__(cls, value: object) -> bool:
        return isinstance(value, str) and value in DECLARATIONS

    def __getattr__(cls, name: str) -> MethodKind:
        if name.isupper() and name.lower() in DECLARATIONS:
            return MethodKind(name.lower())
        raise AttributeError(f"type object 'MethodKind' has no attribute {name!r}")


class MethodKind(str, metaclass=_RegisteredKinds):
    """A registered method kind: a string whose value is the kind's name (``MethodKind("vce")``),
    admitted only where a ``cfcheck.kinds`` entry point registers it (:mod:`cfcheck.kinds.registry`).

    Iterate ``MethodKind`` for every registered kind in the kinds' order; ``MethodKind("x")`` raises
    ValueError for a name no package registers. One object per kind (``is`` compares them).
    """

    _known: ClassVar[dict[str, MethodKind]] = {}

    def __new__(cls, value: str) -> MethodKind:
        name = str(value)
        found = cls._known.get(name)
        if found is None:
            if not isinstance(value, str) or name not in DECLARATIONS:
                raise ValueError(
                    f"{value!r} is not a registered method kind; expected one of {list(DECLARATIONS)} "
                    "(a kind registers through the cfcheck.kinds entry-point group)"
                )
            found = cls._known[name] = super().__new__(cls, name)
        return found

    def __repr__(self) -> str:
        return f"MethodKind({self.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MethodKind, (self.value,))

    @property
    def value(self) -> str:
        """The kind's name."""
        return str.__str__(self)

    @property
    def declaration(self) -> KindDeclaration:
        """What the kind declares (the object its entry point names)."""
        return DECLARATIONS[self.value]

    @property
    def description(self) -> str:
        return self.declaration.description


def calls() -> dict[MethodKind, tuple[str, str]]:
    """The method each kind calls, and the keyword that carries cfcheck's seeded RNG."""
    return {kind: (kind.declaration.call, kind.declaration.rng_keyword) for kind in MethodKind}


def kind_views() -> dict[tuple[MethodKind, MethodKind], tuple[str, str]]:
    """Views: a method of one kind seen as another, so that kind's suites can score it (opt-in with
    ``--cfcheck-view``). (source, target) -> (the view class as "module:Class", what it computes)."""
    return {
        (MethodKind(source), target): view for target in MethodKind for source, view in target.declaration.views.items()
    }


def view_source(kinds: frozenset[MethodKind], target: MethodKind) -> MethodKind | None:
    """The kind among ``kinds`` that has a view as ``target`` (None if none has)."""
    views = kind_views()
    return next((source for source in sorted(kinds) if (source, target) in views), None)


def view_as(method: object, target: MethodKind, kinds: frozenset[MethodKind] | None = None) -> object:
    """``method`` wrapped in its view as ``target`` (see :func:`kind_views`), the view's class
    reached through the target kind's declaration; ``kinds``: the kinds ``method`` implements where
    they are known already (else they are detected).

    Raises:
        ValueError: when no kind ``method`` implements has a view as ``target``.
    """
    source = view_source(detect_kinds(method) if kinds is None else kinds, target)
    if source is None:
        views = ", ".join(f"{a.value} -> {b.value}" for a, b in kind_views()) or "none"
        raise ValueError(f"{type(method).__name__} implements no kind with a view as {target.value} (views: {views})")
    view = resolve(target.declaration.views[source.value][0], f"kind {target.value!r} (its view of {source.value!r})")
    return view(method)


def detect_kinds(method: object) -> frozenset[MethodKind]:
    """All kinds ``method`` implements (possibly none): see :func:`kind_detection`."""
    return frozenset(kind for kind, _ in kind_detection(method)[0])


#: what :func:`kind_detection` finds: the kinds a method implements, each with why, and the calls
#: not taken, each with why
KindDetection = tuple[list[tuple[MethodKind, str]], list[str]]


def kind_detection(method: object) -> KindDetection:
    """The kinds ``method`` (an object, or a class) implements, each with why, and the method
    names that looked like a kind's call but were not taken, each with why.

    A kind counts when the object has the kind's method name (:func:`calls`) and its signature can
    take the kind's call (its declared ``arguments``, positionally): a visual counterfactual explainer
    with a helper ``counterfactual(x, target)`` is not an SCM generator, and is not sent through the
    SCM suites. Where kinds share a call name, the kinds' detectors decide by the parameter names
    (an ``explain`` that names ``z`` or ``latent_classifier`` is a latent explainer's). A signature
    that cannot be read is trusted. ``cfcheck_kind`` overrides all of this.

    Returns:
        ``([(kind, reason), ...], [reason of a name not taken, ...])``.

    Raises:
        ValueError: where ``cfcheck_kind`` names no kind.

    Example:
        >>> class Explainer:
        ...     def explain(self, x, target, classifier, *, generator=None): ...
        ...     def counterfactual(self, x, target): ...
        >>> kinds, ignored = kind_detection(Explainer())
        >>> [kind.value for kind, _ in kinds], len(ignored)
        (['vce'], 1)
    """
    declared = getattr(method, "cfcheck_kind", None)
    if declared is not None:
        values = (declared,) if isinstance(declared, (str, MethodKind)) else tuple(declared)
        try:
            kinds = [MethodKind(v) for v in values]
        except ValueError:
            raise ValueError(
                f"cfcheck_kind={declared!r} on {type(method).__name__}; expected any of {[k.value for k in MethodKind]}"
            ) from None
        return [(kind, f"declared by cfcheck_kind={declared!r}") for kind in kinds], []
    found: list[tuple[MethodKind, str]] = []
    ignored: list[str] = []
    for kind, (name, _) in calls().items():
        function = getattr(method, name, None)
        if not callable(function) or not _claims(kind, function):
            continue
        shown = f"{name}{_signature_text(function)}"
        arguments = kind.declaration.arguments
        if _takes_positionally(method, name, len(arguments)):
            found.append((kind, f"{shown} takes the {kind.value} call {name}({', '.join(arguments)})"))
        else:
            ignored.append(
                f"{shown} is not the {kind.value} call {name}({', '.join(arguments)}): it cannot take "
                f"{len(arguments)} positional arguments, so the {kind.value} suites do not run"
            )
    return found, ignored


def _claims(kind: MethodKind, function: Any) -> bool:
    """Whether ``function``, named as ``kind``'s call, is ``kind``'s where several kinds share that
    name: a kind with a detector (``claims``) takes the parameter names it accepts, a kind without
    one takes the call when no other kind's detector does."""
    sharing = [
        other.declaration
        for other in MethodKind
        if other is not kind and other.declaration.call == kind.declaration.call
    ]
    if not sharing:
        return True
    parameters = frozenset(_parameter_names(function))
    if kind.declaration.claims is not None:
        return kind.declaration.claims(parameters)
    return not any(other.claims is not None and other.claims(parameters) for other in sharing)


def _signature_text(function: Any) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return "(…)"


def _takes_positionally(owner: object, name: str, count: int) -> bool:
    """Whether ``owner.name`` can be called with ``count`` positional arguments (True where its
    signature cannot be read). On a class, a plain function's ``self`` takes one more."""
    function = getattr(owner, name)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True
    if isinstance(owner, type) and not isinstance(
        inspect.getattr_static(owner, name, None), (staticmethod, classmethod)
    ):
        count += 1  # an unbound function: the instance comes first
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def accepts_generator(function: Any, keyword: str = "generator") -> bool:
    """Whether ``function`` takes the RNG keyword ``keyword`` (so cfcheck can seed it)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def names_parameter(function: Any, keyword: str) -> bool:
    """Whether ``function``'s signature names ``keyword`` itself (``**kwargs`` does not count)."""
    return keyword in _parameter_names(function)


def expected_interface() -> str:
    """The sentence every 'implements no kind' error ends with."""
    lines = "\n".join(f"  - {kind.description}" for kind in MethodKind)
    return f"a method object implementing one of:\n{lines}"


def _parameter_names(function: Any) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()
