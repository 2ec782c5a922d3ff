"""SCM generator of the scm_shapes test domain: a fresh shape with every attribute drawn anew (changes everything) (:mod:`tests.own_domains.scm_methods`).

Name it by its path (``--method=<repo>/tests/own_domains/scm_adapters/scramble.py``): it puts the repository
root on ``sys.path`` itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_REPO = str(Path(__file__).resolve().parents[3])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from tests.own_domains.scm_methods import Scramble  # noqa: E402  (after the path is set)

cfcheck_name = "shapes_scramble"


@pytest.fixture(scope="session")
def cf_method() -> Scramble:
    return Scramble()
