"""Report formats: what is drawn from a scorecard into its run folder, each an implementation of the
hook :func:`cfcheck.hookspecs.pytest_cfcheck_scorecard`.

The bundled formats (``scorecard.md``, ``scorecard.html``, ``badge.svg``, ``scores.csv``) are plugins of the engine like
a user's: :data:`BUNDLED` names them, :func:`register_bundled` registers them with a plugin manager
(pytest's, in a run; :func:`format_manager`'s outside one). :func:`write_formats` calls every
implementation on its own, so one that raises costs its own file only (:class:`FormatFailure`);
:func:`render_run` redraws a run folder from its ``scorecard.json`` alone (``cfcheck render``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from cfcheck.core.io import atomic_write_text
from cfcheck.reporting.model import Scorecard

__all__ = [
    "BUNDLED",
    "FormatError",
    "FormatFailure",
    "format_manager",
    "register_bundled",
    "render_all",
    "render_run",
    "write_formats",
]

#: the hook every format implements
HOOK = "pytest_cfcheck_scorecard"
hookimpl = pluggy.HookimplMarker("pytest")


class MarkdownFormat:
    """``scorecard.md`` (:mod:`cfcheck.reporting.markdown`)."""

    @hookimpl
    def pytest_cfcheck_scorecard(self, scorecard: Scorecard, run_dir: Path) -> Path:
        from cfcheck.reporting.markdown import render_markdown

        return atomic_write_text(Path(run_dir) / "scorecard.md", render_markdown(scorecard, run_dir))


class HtmlFormat:
    """``scorecard.html`` (:mod:`cfcheck.reporting.html`)."""

    @hookimpl
    def pytest_cfcheck_scorecard(self, scorecard: Scorecard, run_dir: Path) -> Path:
        from cfcheck.reporting.html import render_html

        return atomic_write_text(Path(run_dir) / "scorecard.html", render_html(scorecard, run_dir))


class ScoresCsvFormat:
    """``scores.csv`` (:mod:`cfcheck.reporting.scores_csv`)."""

    @hookimpl
    def pytest_cfcheck_scorecard(self, scorecard: Scorecard, run_dir: Path) -> Path:
        from cfcheck.reporting.scores_csv import render_scores_csv

        return atomic_write_text(Path(run_dir) / "scores.csv", render_scores_csv(scorecard))


class BadgeFormat:
    """``badge.svg`` (:mod:`cfcheck.reporting.badge`)."""

    @hookimpl
    def pytest_cfcheck_scorecard(self, scorecard: Scorecard, run_dir: Path) -> Path:
        from cfcheck.reporting.badge import render_badge

        return atomic_write_text(Path(run_dir) / "badge.svg", render_badge(scorecard, run_dir))


#: the bundled formats by plugin name (``-p no:<name>`` leaves one out of a run)
BUNDLED: dict[str, object] = {
    "cfcheck-format-markdown": MarkdownFormat(),
    "cfcheck-format-html": HtmlFormat(),
    "cfcheck-format-badge": BadgeFormat(),
    "cfcheck-format-csv": ScoresCsvFormat(),
}


@dataclass(frozen=True)
class FormatFailure:
    """A format whose hook implementation raised: its plugin's name and the error."""

    plugin: str
    error: str

    def describe(self) -> str:
        return f"report format {self.plugin} failed: {self.error}"


class FormatError(Exception):
    """Raised after a scorecard and every other format were written, naming the formats that failed.

    Attributes:
        path: the scorecard JSON that was written.
        failures: the formats that raised.
    """

    def __init__(self, path: Path, failures: Sequence[FormatFailure]) -> None:
        self.path = path
        self.failures = tuple(failures)
        listed = "; ".join(failure.describe() for failure in self.failures)
        super().__init__(f"{listed} (scorecard.json and the other formats were written in {path.parent})")


def register_bundled(pluginmanager: pluggy.PluginManager) -> None:
    """Register the bundled formats with ``pluginmanager`` (each once; a blocked name is left out)."""
    for name, plugin in BUNDLED.items():
        if not pluginmanager.has_plugin(name) and not pluginmanager.is_blocked(name):
            pluginmanager.register(plugin, name)


def _load(spec: str) -> Any:
    """A plugin given as a module name or a ``.py`` file."""
    path = Path(spec)
    if spec.endswith(".py"):
        if not path.is_file():
            raise FileNotFoundError(f"no plugin file {spec}")
        found = importlib.util.spec_from_file_location(f"cfcheck_format_plugin_{path.stem}", path)
        if found is None or found.loader is None:
            raise ValueError(f"{spec} cannot be imported as a plugin")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


class _FormatManager(pluggy.PluginManager):
    """A plugin manager that, like pytest's, takes a plugin's ``pytest_cfcheck_*`` functions without a
    marker (a conftest.py's hooks are plain functions)."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("pytest_cfcheck_") and inspect.isroutine(getattr(plugin, name, None)):
            return {
                "wrapper": False,
                "hookwrapper": False,
                "optionalhook": False,
                "tryfirst": False,
                "trylast": False,
                "specname": None,
            }
        return opts


def format_manager(plugins: Iterable[Any] = ()) -> pluggy.PluginManager:
    """A plugin manager with cfcheck's hooks, the bundled formats and ``plugins`` (modules, objects, module
    names or ``.py`` files implementing :func:`~cfcheck.hookspecs.pytest_cfcheck_scorecard`): the formats
    outside a pytest run."""
    from cfcheck import hookspecs

    manager = _FormatManager("pytest")
    manager.add_hookspecs(hookspecs)
    register_bundled(manager)
    for plugin in plugins:
        manager.register(_load(plugin) if isinstance(plugin, str) else plugin)
    return manager


def write_formats(
    scorecard: Scorecard, run_dir: Path, pluginmanager: pluggy.PluginManager | None = None
) -> tuple[list[Path], list[FormatFailure]]:
    """Call every format on ``scorecard``, each on its own.

    Args:
        scorecard: the run's scorecard.
        run_dir: its run folder.
        pluginmanager: where the formats are registered (pytest's in a run; None: :func:`format_manager`);
            the bundled ones are registered with it where they are not yet.

    Returns:
        The paths the formats returned, and the formats that raised (the others were written).
    """
    manager = pluginmanager if pluginmanager is not None else format_manager()
    register_bundled(manager)
    caller = getattr(manager.hook, HOOK)
    impls = [impl for impl in caller.get_hookimpls() if not (impl.hookwrapper or impl.wrapper)]
    written: list[Path] = []
    failures = []
    for impl in reversed(impls):  # pluggy's order: the last registered first
        others = [other.plugin for other in impls if other.plugin is not impl.plugin]
        try:  # (wrappers of the hook still wrap each call)
            results = manager.subset_hook_caller(HOOK, others)(scorecard=scorecard, run_dir=Path(run_dir))
        except Exception as error:  # noqa: BLE001 - one format's failure must not cost the others
            failures.append(FormatFailure(impl.plugin_name, f"{type(error).__name__}: {error}"))
            continue
        for result in results:
            found = [result] if isinstance(result, (str, Path)) else list(result or [])
            written += [Path(path) for path in found]
    return written, failures


def render_all(scorecard: Scorecard | Mapping[str, Any], run_dir: Path | None = None) -> tuple[str, str, str]:
    """The bundled formats' texts (Markdown, HTML, badge) of ``scorecard``, without writing them."""
    from cfcheck.reporting.badge import render_badge
    from cfcheck.reporting.html import render_html
    from cfcheck.reporting.markdown import render_markdown

    card = Scorecard.of(scorecard)
    return render_markdown(card, run_dir), render_html(card, run_dir), render_badge(card, run_dir)


def render_run(run_dir: Path, plugins: Iterable[Any] = ()) -> list[Path]:
    """Redraw every format of the run in ``run_dir`` from its ``scorecard.json`` alone (no domain is
    looked up): the bundled formats and those of ``plugins`` (see :func:`format_manager`).

    Returns:
        The paths written.

    Raises:
        FormatError: after writing the others, where a format raised.
        FileNotFoundError, ValueError: ``run_dir`` holds no readable scorecard.
    """
    from cfcheck.results import load_scorecard

    run_dir = Path(run_dir)
    card = Scorecard.from_json(load_scorecard(run_dir))
    written, failures = write_formats(card, run_dir, format_manager(plugins))
    if failures:
        raise FormatError(run_dir / "scorecard.json", failures)
    return written
