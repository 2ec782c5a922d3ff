"""cfcheck's hook specifications (registered with ``pytest_addhooks``).

A ``conftest.py`` or an installed plugin implements them to extend a run::

    def pytest_cfcheck_domains(config):
        from mypkg.domains import FacesDomain
        return [FacesDomain()]
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_cfcheck_domains(config: pytest.Config) -> list[Any] | None:
    """Domains this plugin or conftest adds to the run: domain objects, classes, factories or specs
    (``"pkg.module:factory"``, ``"path/file.py"``). They join the registered domains: a run without
    ``--cfcheck-domain`` (or ``[tool.cfcheck] domains``) runs them, and they can be selected by name."""
