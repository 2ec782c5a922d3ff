"""cfcheck's hook specifications (registered with ``pytest_addhooks``).

A ``conftest.py`` or an installed plugin implements them to extend a run, the way a pytest plugin's
hooks are implemented: a function of that name (taking any subset of the arguments named here)::

    def pytest_cfcheck_domains(config):
        from mypkg.domains import FacesDomain
        return [FacesDomain()]

The hooks, in the order a run calls them: :func:`pytest_cfcheck_domains` (at configuration), then, when
the scorecard is written, :func:`pytest_cfcheck_update_provenance`, :func:`pytest_cfcheck_update_json`
and :func:`pytest_cfcheck_scorecard` (once per format; the bundled Markdown, HTML and badge formats are
implementations of it too). ``docs/reference/hooks.md`` shows each with an example.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_cfcheck_domains(config: pytest.Config) -> list[Any] | None:
    """Domains this plugin or conftest adds to the run: domain objects, classes, factories or specs
    (``"pkg.module:factory"``, ``"path/file.py"``). They join the registered domains: a run without
    ``--cfcheck-domain`` (or ``[tool.cfcheck] domains``) runs them, and they can be selected by name.

    Args:
        config: the pytest config.

    Returns:
        The domains to add (None or an empty list: none).

    Example:
        .. code-block:: python

            def pytest_cfcheck_domains(config):
                return ["my_domains.py:FACES"]
    """


@pytest.hookspec
def pytest_cfcheck_update_provenance(config: pytest.Config, provenance: dict[str, Any]) -> None:
    """Add to (or change) the scorecard's ``provenance`` before it is written: who ran it, on which
    cluster, the commit of the method under test. Called on the controller of a pytest-xdist run, once
    per written scorecard, before :func:`pytest_cfcheck_update_json`.

    Args:
        config: the pytest config.
        provenance: the scorecard's ``provenance`` object, changed in place (keep it JSON-ready).

    Example:
        .. code-block:: python

            import getpass, subprocess

            def pytest_cfcheck_update_provenance(config, provenance):
                provenance["user"] = getpass.getuser()
                provenance["method_commit"] = subprocess.check_output(
                    ["git", "-C", "../my_method", "rev-parse", "HEAD"], text=True).strip()
    """


@pytest.hookspec
def pytest_cfcheck_update_json(config: pytest.Config, scorecard_json: dict[str, Any]) -> None:
    """Add fields to the scorecard JSON before it is written (and before the formats are drawn from
    it). cfcheck's own keys (``scores``, ``profile``, ``protocols``, ``calibration``, …) are what
    comparisons, baselines and the formats read: add keys of your own rather than changing those.

    Args:
        config: the pytest config.
        scorecard_json: the scorecard as ``scorecard.json`` will hold it, changed in place.

    Example:
        .. code-block:: python

            def pytest_cfcheck_update_json(config, scorecard_json):
                scorecard_json["team"] = {"name": "explainers", "ticket": "XAI-42"}
    """


@pytest.hookspec
def pytest_cfcheck_scorecard(scorecard: Any, run_dir: Any) -> Any:
    """Write a report format of the scorecard into the run folder. Called for every implementation
    after ``scorecard.json`` is written: when a run writes its scorecard, when ``cfcheck merge`` joins
    shards and when ``cfcheck render RUN_DIR`` redraws a run. The bundled formats (``scorecard.md``,
    ``scorecard.html``, ``badge.svg``) are implementations registered as the plugins
    ``cfcheck-format-markdown``, ``cfcheck-format-html`` and ``cfcheck-format-badge`` (``-p
    no:cfcheck-format-html`` leaves one out).

    Each implementation is called on its own: one that raises is reported (the terminal's cfcheck
    section, ``cfcheck render``'s exit status 1) with its plugin's name, and the other formats and the
    JSON are still written; the run's exit status stays what its scores decided.

    Args:
        scorecard: the run's scorecard, :class:`cfcheck.reporting.model.Scorecard` (typed: its
            ``sections`` per kind and domain with their suites and scores, ``headline``, ``provenance``,
            ``protocols``, ``calibration``; ``data`` is the JSON itself).
        run_dir: the run folder (:class:`pathlib.Path`), holding ``scorecard.json``, ``samples.csv``
            and the example grids.

    Returns:
        The path or paths written (or None); ``cfcheck render`` lists them.

    Example:
        .. code-block:: python

            def pytest_cfcheck_scorecard(scorecard, run_dir):
                rows = [f"{s.kind},{s.domain},{s.suite},{s.metric},{s.task},{s.value},{s.verdict}"
                        for s in scorecard.scores]
                path = run_dir / "verdicts.csv"
                path.write_text("kind,domain,suite,metric,task,value,verdict\\n" + "\\n".join(rows) + "\\n")
                return path
    """
