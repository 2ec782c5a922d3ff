"""SCM generator of the scm_colour test domain: right by construction: the input's own style re-rendered with the attributes the domain propagates (:mod:`tests.own_domains.scm_colour_methods`).

Name it by its path (``--method=<repo>/tests/own_domains/scm_adapters/colour_renderer.py``): it puts the repository
root on ``sys.path`` itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_REPO = str(Path(__file__).resolve().parents[3])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from tests.own_domains.scm_colour_methods import ColourRenderer  # noqa: E402  (after the path is set)

cfcheck_name = "colour_renderer"


@pytest.fixture(scope="session")
def cf_method(cfcheck_domain: Any) -> ColourRenderer:
    return ColourRenderer(cfcheck_domain)
