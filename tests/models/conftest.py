"""Run the model tests single-threaded, as the reference models are trained (see
``single_torch_thread`` in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="module")
def _models_single_thread(single_torch_thread):
    yield
