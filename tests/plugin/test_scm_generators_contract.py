"""The bundled HVAE and GAN SCM generators obey the scm kind's calling contract, run exactly as a user's
adapter (``pytest --method=cfcheck.fixtures.scm.hvae -k "scm and contract"``)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("fixture", ["hvae", "hvae_mean", "gan"])
def test_bundled_scm_generator_passes_the_contract(tiny, fixture):
    result = tiny.runpytest(f"--method=cfcheck.fixtures.scm.{fixture}", "-k", "scm and contract")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 2 and not outcomes.get("failed") and not outcomes.get("error"), (
        result.stdout.str()[-3000:]
    )
