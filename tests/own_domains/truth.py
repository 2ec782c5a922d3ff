"""User positive control of the test domains: each input's true counterfactual, its own style
parameters re-rendered with the target class (:class:`tests.own_domains.rerender.RenderedTruth`).

Name it by its path, ``--method=<repo>/tests/own_domains/truth.py`` (``cfcheck calibrate --positive``
likewise): it puts the repository root on ``sys.path`` itself, so it loads from any working folder.
It works on every domain of :mod:`tests.own_domains.build` (the array and the PNG-tree layouts).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from tests.own_domains.rerender import RenderedTruth  # noqa: E402  (after the path is set)

#: reports are filed under own_truth-<profile>
cfcheck_name = "own_truth"


def method_for(domain: Any) -> RenderedTruth:
    """The truth adapter's method on ``domain``, outside pytest (a calibration's positive control)."""
    return RenderedTruth(domain)


@pytest.fixture(scope="session")  # one per domain: it indexes the domain's images once
def cf_method(cfcheck_domain: Any) -> RenderedTruth:
    return method_for(cfcheck_domain)
