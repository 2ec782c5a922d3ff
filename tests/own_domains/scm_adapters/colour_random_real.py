"""SCM generator of the scm_colour test domain: a random real image in the bins of the attributes the domain propagates (:mod:`tests.own_domains.scm_methods`).

Name it by its path (``--method=<repo>/tests/own_domains/scm_adapters/colour_random_real.py``): it puts the
repository root on ``sys.path`` itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_REPO = str(Path(__file__).resolve().parents[3])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from tests.own_domains.scm_colour_methods import DomainRows  # noqa: E402  (after the path is set)
from tests.own_domains.scm_methods import RandomReal  # noqa: E402

cfcheck_name = "colour_random_real"


@pytest.fixture(scope="session")
def cf_method(cfcheck_domain: Any) -> RandomReal:
    return RandomReal(cfcheck_domain, DomainRows(cfcheck_domain))
