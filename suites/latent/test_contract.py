"""The latent method's calling contract: outputs it can be scored on, no side effects, determinism.

Shape (N×K×D with the profile's K), dtype, device, NaN/Inf, the validity mask and non-mutation
are checked on every call during generation too; these tests make the contract visible as its
own lines.
"""

from __future__ import annotations

import pytest

from cfcheck.kinds.contract import assert_deterministic, call_on_contract_inputs

pytestmark = pytest.mark.cfcheck_kind("latent")


def test_output_contract(cfcheck_method, cfcheck_session):
    """Shape, dtype, device, finite values, validity mask, inputs left unchanged."""
    call_on_contract_inputs(cfcheck_session, "latent", cfcheck_method, seed=0)


def test_deterministic_under_seed(cfcheck_method, cfcheck_session):
    """The same inputs and the same seeded generator give the same outputs."""
    assert_deterministic(cfcheck_session, "latent", cfcheck_method)
