"""The method's calling contract: outputs it can be scored on, no side effects, determinism.

Shapes, dtypes, devices, ranges and NaN/Inf are checked on every call during generation too;
these tests make the contract visible as its own lines in the report.
"""

from __future__ import annotations

import pytest
import torch

from cfcheck.generation import MethodOutputError, call_method

pytestmark = pytest.mark.cfcheck_kind("vce")


@pytest.fixture
def small_batch(cfcheck_session):
    inputs = cfcheck_session.inputs("ideal", cfcheck_session.seed)
    k = cfcheck_session.profile.determinism_batch
    # one input per class, so every target class is exercised
    picks = torch.cat([torch.nonzero(inputs.source == c).flatten()[:1] for c in range(10)])[:max(k, 1) * 3]
    device = cfcheck_session.device
    return inputs.x[picks].to(device), inputs.target[picks].to(device)


def _explain(method, cfcheck_session, x, target, seed):
    __tracebackhide__ = True
    generator = torch.Generator(device=cfcheck_session.device).manual_seed(seed)
    try:
        return call_method(method, x, target, cfcheck_session.zoo["cnn"], generator)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)


def test_output_contract(cfcheck_method, cfcheck_session, small_batch):
    """Shape, dtype, device, range, finite values, validity mask, input left unchanged."""
    x, target = small_batch
    output = _explain(cfcheck_method, cfcheck_session, x, target, seed=0)
    assert output.cfs.shape[0] == len(x)


def test_deterministic_under_seed(cfcheck_method, cfcheck_session, small_batch):
    """The same inputs and the same seeded generator give the same counterfactuals."""
    x, target = small_batch
    first = _explain(cfcheck_method, cfcheck_session, x, target, seed=1234)
    second = _explain(cfcheck_method, cfcheck_session, x, target, seed=1234)
    if not (torch.equal(first.cfs, second.cfs) and torch.equal(first.valid, second.valid)):
        difference = float((first.cfs - second.cfs).abs().max())
        pytest.fail(
            f"two calls with the same seed differ (max |difference| {difference:.3g}); draw all "
            "randomness from the `generator` argument cfcheck passes to explain()",
            pytrace=False,
        )
