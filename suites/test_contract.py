"""The method's calling contract, for every kind it implements: outputs it can be scored on, no
side effects, determinism.

Shape (with the profile's K where a kind asks for several outputs per input), dtype, device,
range where the kind has one, NaN/Inf, the validity mask and non-mutation are checked on every
call during generation too; these tests make the contract visible as their own lines. The plugin
parametrises ``cfcheck_contract_kind`` over the registered kinds, each marked as its kind's suite;
what differs between kinds comes from the kind's spec (:mod:`cfcheck.kinds.contract`).
"""

from __future__ import annotations

from cfcheck.kinds.contract import assert_deterministic, call_on_contract_inputs


def test_output_contract(cfcheck_method, cfcheck_session, cfcheck_contract_kind):
    """Shape, dtype, device, range, finite values, validity mask, inputs left unchanged."""
    call_on_contract_inputs(cfcheck_session, cfcheck_contract_kind, cfcheck_method, seed=0)


def test_deterministic_under_seed(cfcheck_method, cfcheck_session, cfcheck_contract_kind):
    """The same inputs and the same seeded generator give the same outputs."""
    assert_deterministic(cfcheck_session, cfcheck_contract_kind, cfcheck_method)
