"""The one cfcheck session object of a pytest run (kept in ``config.stash``).

It owns everything that outlives a single test: the resolved options and profile, the method
under test, the selected domains and their reference models, the outputs generated per task
(in memory and in the persistent cache), the score records and the baseline; and it writes the
scorecard at the end (those outputs: :mod:`cfcheck.session_outputs`). It knows no kind and no
domain: those answer through :class:`cfcheck.kinds.base.KindSpec` and
:class:`cfcheck.domains.base.Domain`.

:meth:`CfcheckSession.from_config` builds it from pytest's config and the run's options
(:func:`cfcheck.options.read_options`). Here the ``adapter`` is what ``--method`` named, loaded
(:class:`cfcheck.adapter.MethodSpec`), a ``method`` is always the method object under test and a
``spec`` always a kind's :class:`~cfcheck.kinds.base.KindSpec`.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections import Counter
from collections.abc import Callable

import pytest
import torch

from cfcheck.adapter import PLUGIN_NAME, MethodSpec, load_method
from cfcheck.baseline import Baseline
from cfcheck.core.cache import GenerationCache
from cfcheck.core.devices import pin_worker_device
from cfcheck.core.threads import share_cpu_between_xdist_workers
from cfcheck.domains.base import Domain
from cfcheck.kinds import protocols
from cfcheck.kinds.protocols import KindDetection, MethodKind, calls
from cfcheck.options import RunOptions, resolve_domains
from cfcheck.session_outputs import SessionOutputs, spec_of


class CfcheckSession(SessionOutputs):
    """The run's session: its settings, domains and the method's kinds (its outputs: the base class)."""

    def __init__(
        self,
        *,
        adapter: MethodSpec,
        options: RunOptions,
        device: torch.device | None = None,
        domains: dict[str, Domain] | None = None,
        broken_domains: dict[str, str] | None = None,
        baseline: Baseline | None = None,
    ) -> None:
        """A session for ``adapter`` (the loaded ``--method``) with the run's ``options``.

        Args:
            adapter: what ``--method`` named, loaded (:func:`cfcheck.adapter.load_method`).
            options: the run's options (:func:`cfcheck.options.read_options`).
            device: the device the run uses (default: ``options.device``, not pinned to a worker's GPU).
            domains: the run's domains by name, resolved once; None: every registered domain, resolved on use.
            broken_domains: domain spec → why it could not be resolved (its test fails; the others run).
            baseline: the baseline the run is gated against, loaded (``options.baseline``).
        """
        super().__init__()
        self.adapter = adapter
        #: kinds whose suites also score the method through its view as that kind (--cfcheck-view)
        self.views = options.views
        self.profile = options.profile
        self.device = device if device is not None else options.device
        self.seed = options.seed
        self.report_dir = options.report_dir
        self.baseline = baseline
        self.save_baseline = options.save_baseline
        self.shard = options.shard
        self.cache = GenerationCache(options.cache_dir)
        #: the run's domains by name, resolved once (``--cfcheck-domain``, ``[tool.cfcheck] domains``,
        #: or every registered one); None: every registered domain, resolved on use
        self._domains = dict(domains) if domains is not None else {}
        self.requested_domains = tuple(self._domains) if domains is not None else None
        #: domain spec → why it could not be resolved (its test fails; the other domains run)
        self.broken_domains = dict(broken_domains or {})
        self._zoos = {}
        self._memo = {}
        self.deselected: str | None = None  # why suites of other kinds were deselected
        #: the method's kinds and the calls not taken, each with why (set when cf_method first runs here)
        self.kind_reasons: list[str] | None = None
        #: what the method objects implement (:meth:`method_kinds`): by class, and by object
        self._class_detections: dict[type, KindDetection] = {}
        self._object_detections: dict[int, tuple[Callable[[], object], KindDetection]] = {}
        if adapter.detected is not None:  # ``pkg.mod:attr``: detected when it was loaded
            self._keep_detection(*adapter.detected)

    @classmethod
    def from_config(cls, config: pytest.Config, options: RunOptions) -> CfcheckSession:
        """The run's session: the method ``options`` names loaded and registered as a pytest plugin (so
        that its hooks, ``pytest_cfcheck_domains`` among them, take part), the run's domains resolved,
        the baseline loaded, this process's share of the CPU and its device set, the examples of an
        earlier run cleared (by the controller), and the profile checked against the domains.

        Args:
            config: pytest's config of the run.
            options: the run's options (:func:`cfcheck.options.read_options`).

        Returns:
            The session, ready for collection.

        Raises:
            pytest.UsageError: where the method, every domain, the baseline or the profile cannot be used.
        """
        adapter = load_method(options.method, config.rootpath)
        config.pluginmanager.register(adapter.module, PLUGIN_NAME)
        domains, broken_domains = resolve_domains(config, options.domains)
        if broken_domains and not domains:  # nothing to run: say why now
            raise pytest.UsageError("cfcheck: no domain could be loaded: " + "; ".join(broken_domains.values()))
        try:
            baseline = Baseline.load(options.baseline) if options.baseline else None
        except (FileNotFoundError, ValueError) as error:
            raise pytest.UsageError(f"--cfcheck-baseline: {error}") from None
        share_cpu_between_xdist_workers(config)
        session = cls(
            adapter=adapter,
            options=options,
            device=pin_worker_device(options.device),  # a GPU per xdist worker
            domains=domains,
            broken_domains=broken_domains,
            baseline=baseline,
        )
        if not hasattr(config, "workerinput") and not config.option.collectonly:  # the controller starts afresh
            from cfcheck.reporting.examples import clear_examples

            clear_examples(session.run_dir)
        try:
            session.check_profile()
        except ValueError as error:
            raise pytest.UsageError(f"cfcheck: {error}") from None
        return session

    # -- the method's kinds, detected once ------------------------------------------------
    def method_kinds(self, method: object) -> KindDetection:
        """What ``method`` implements (:func:`cfcheck.kinds.protocols.kind_detection`), detected once per
        run: once per class where its kinds follow from its class (:func:`kinds_follow_from_class`), so
        a ``cf_method`` fixture that builds an object per test or per domain is not detected again,
        else once per object; a method that ``pkg.mod:attr`` names was detected when it was loaded.

        Raises:
            ValueError: where ``method``'s ``cfcheck_kind`` names no registered kind.
        """
        if kinds_follow_from_class(method):
            known = self._class_detections.get(type(method))
        else:
            held = self._object_detections.get(id(method))
            known = held[1] if held is not None and held[0]() is method else None
        if known is None:
            known = protocols.kind_detection(method)
            self._keep_detection(method, known)
        return known

    def _keep_detection(self, method: object, detection: KindDetection) -> None:
        if kinds_follow_from_class(method):
            self._class_detections[type(method)] = detection
            return
        try:  # weakly, where it can: a method object per test must not be kept alive by the cache
            reference: Callable[[], object] = weakref.ref(method)
        except TypeError:
            reference = lambda: method  # noqa: E731 - an object that takes no weak reference
        self._object_detections[id(method)] = (reference, detection)

    # -- domains, models and per-run memos (the kinds' view of the run: cfcheck.kinds.base.Run) --
    def domain_names(self) -> tuple[str, ...]:
        """Names of the run's domains, in the order they were selected."""
        if self.requested_domains is not None:
            return self.requested_domains
        return super().domain_names()

    def method_domains(self) -> tuple[str, ...]:
        """The run's domains that have suites for the method (for its known kinds and views, or for
        any kind when its kinds are known only once its fixture runs), in the run's order."""
        counts = self._suite_counts()
        return tuple(name for name in self.domain_names() if name in counts)

    def default_method_domain(self) -> str | None:
        """The domain a method fixture is built for where the test does not say (the plugin
        parametrises ``cfcheck_domain`` by the task's domain wherever it is another): the one most
        of the method's kinds have suites on, the first in the run's order among equals."""
        counts = self._suite_counts()
        names = self.method_domains()
        return max(names, key=lambda name: (counts[name], -names.index(name))) if names else None

    def _suite_counts(self) -> Counter[str]:
        """Domain → how many of the method's kinds (known kinds and views, else every kind) have suites on it."""
        known = self.adapter.kinds
        kinds = set(known) | set(self.views) if known is not None else set(MethodKind)
        return Counter(domain.name for kind in kinds for domain in self.domains_for(kind)[0])

    def domains_for(self, kind: MethodKind | str, *, usable_only: bool = True) -> tuple[list[Domain], str | None]:
        """The selected domains (objects) that have suites for ``kind``, and why there are none if so.

        Args:
            kind: the method kind.
            usable_only: leave out the domains whose load check found a problem
                (:meth:`unusable_reason`): their scores would not mean anything.
        """
        specs = [spec_of(kind)]
        viewed_from = self._view_source(MethodKind(kind))
        if viewed_from is not None:  # the view calls the method as its own kind: both must apply
            specs.append(spec_of(viewed_from))
        names = self.domain_names()
        chosen, reasons = [], []
        for name in names:
            domain = self.domain(name)
            reason = next((r for spec in specs if (r := spec.supports(domain)) is not None), None)
            if reason is None and usable_only and self.unusable_reason(name) is not None:
                reason = f"domain {name!r} cannot be used (see test_domain_loads[{name}])"
            if reason is None:
                chosen.append(domain)
            else:
                reasons.append(reason)
        return chosen, ("; ".join(reasons) or None) if not chosen else None

    def unusable_domains_for(self, kind: MethodKind | str) -> dict[str, str]:
        """The run's domains that ``kind`` has suites for but that fail their load check: name → why."""
        supported = self.domains_for(kind, usable_only=False)[0]
        return {d.name: reason for d in supported if (reason := self.unusable_reason(d.name)) is not None}

    def unusable_reason(self, name: str) -> str | None:
        """Why the run's domain ``name`` cannot be scored (its load check's problems, one message), or
        None: checked once per run and process (:func:`cfcheck.domains.checks.domain_problems`, and
        each kind's :meth:`~cfcheck.kinds.base.KindSpec.size_problems` at the run's profile). A domain
        with a problem fails ``test_domain_loads`` once and none of its suites run."""

        def check() -> str | None:
            from cfcheck.domains.checks import domain_problems

            domain = self.domain(name)
            problems = domain_problems(domain, self.zoo(domain))
            if not problems:  # the sizes are worth checking only on data that loads
                for kind in MethodKind:
                    if spec_of(kind).supports(domain) is None:
                        problems += spec_of(kind).size_problems(self, domain)
            return "; ".join(dict.fromkeys(problems)) or None

        return self.memo(("unusable", name), check)

    def load_warnings(self, name: str) -> list[str]:
        """What the load check of the run's usable domain ``name`` warns of (each kind's
        :meth:`~cfcheck.kinds.base.KindSpec.size_warnings` at the run's profile): the domain is
        scored, and the scores each warning names are skipped with its reason; empty for a domain
        that cannot be used (its problems are reported instead)."""

        def check() -> list[str]:
            if self.unusable_reason(name) is not None:
                return []
            domain = self.domain(name)
            found = [
                w
                for kind in MethodKind
                if spec_of(kind).supports(domain) is None
                for w in spec_of(kind).size_warnings(self, domain)
            ]
            return list(dict.fromkeys(found))

        return self.memo(("load-warnings", name), check)

    def check_profile(self) -> None:
        """ValueError when the profile asks a selected domain for something it lacks."""
        for kind in MethodKind:
            for domain in self.domains_for(kind, usable_only=False)[0]:
                spec_of(kind).check(self, domain)


def kinds_follow_from_class(method: object) -> bool:
    """Whether all that kind detection reads of ``method`` is its class's: ``method`` is no class
    itself, its class has no ``__getattr__`` or ``__getattribute__`` of its own, and neither
    ``cfcheck_kind`` nor a kind's call is an attribute of the object (in its ``__dict__``, a slot,
    a property or a cached property). Then every object of the class implements the same kinds."""
    cls = type(method)
    if isinstance(method, type) or hasattr(cls, "__getattr__") or cls.__getattribute__ is not object.__getattribute__:
        return False
    own = getattr(method, "__dict__", {})
    for name in {"cfcheck_kind", *(call for call, _ in calls().values())}:
        found = inspect.getattr_static(cls, name, None)
        if name in own or hasattr(type(found), "__set__") or isinstance(found, functools.cached_property):
            return False
    return True
