"""The explainer's calling contract: outputs it can be scored on, no side effects, determinism.

Shapes, dtypes, devices, ranges and NaN/Inf are checked on every call during generation too;
these tests make the contract visible as its own lines in the report.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.contract import assert_deterministic, call_on_contract_inputs

pytestmark = pytest.mark.cfcheck_kind("vce")


def test_output_contract(cfcheck_method, cfcheck_session):
    """Shape, dtype, device, range, finite values, validity mask, input left unchanged."""
    call_on_contract_inputs(cfcheck_session, "vce", cfcheck_method, seed=0)


def test_deterministic_under_seed(cfcheck_method, cfcheck_session):
    """The same inputs and the same seeded generator give the same counterfactuals."""
    assert_deterministic(cfcheck_session, "vce", cfcheck_method)
