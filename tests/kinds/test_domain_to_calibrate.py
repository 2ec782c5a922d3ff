"""The checks every kind's domain calibration makes before it runs a control
(:func:`cfcheck.calibration.runs.domain_to_calibrate`): bad seeds or jobs, a bundled domain (judged by
the metric cards' bars) and a domain without a calibration folder are refused, naming the problem —
through each kind's ``calibrate_domain`` as well, before any control runs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cfcheck.calibration.runs import domain_to_calibrate
from cfcheck.kinds.scm.calibration import calibrate_domain as calibrate_scm
from cfcheck.kinds.vce.calibration import calibrate_domain as calibrate_vce


@pytest.mark.parametrize(
    ("seeds", "jobs", "message"),
    [
        ((), 1, "one or more non-negative integers, got []"),
        ((0, -1), 1, "non-negative integers, got [0, -1]"),
        ((True,), 1, "non-negative integers, got [True]"),
        ((0, 1, 0), 1, "must be distinct, got [0, 1, 0]"),
        ((0,), 0, "`jobs` must be a positive int, got 0"),
        ((0,), True, "`jobs` must be a positive int, got True"),
    ],
)
def test_bad_seeds_or_jobs_are_refused_before_the_domain_is_resolved(monkeypatch, seeds, jobs, message):
    import cfcheck.domains as domains

    monkeypatch.setattr(domains, "get_domain", lambda spec: pytest.fail("resolved the domain"))
    with pytest.raises(ValueError) as caught:
        domain_to_calibrate("mine", seeds, jobs)
    assert message in str(caught.value)


def test_a_domain_without_a_calibration_folder_is_refused(monkeypatch):
    import cfcheck.domains as domains

    monkeypatch.setattr(
        domains, "get_domain", lambda spec: SimpleNamespace(name="mine", card_calibrated=False, calibration_dir=None)
    )
    with pytest.raises(ValueError, match="domain 'mine' has no calibration_dir to keep its bars in"):
        domain_to_calibrate("mine", (0,), 1)


def test_a_user_domain_with_a_folder_is_returned(monkeypatch, tmp_path):
    import cfcheck.domains as domains

    mine = SimpleNamespace(name="mine", card_calibrated=False, calibration_dir=tmp_path)
    monkeypatch.setattr(domains, "get_domain", lambda spec: mine if spec == "mine" else None)
    assert domain_to_calibrate("mine", (0, 1, 2), 2) is mine


@pytest.mark.parametrize("calibrate", [calibrate_scm, calibrate_vce], ids=["scm", "vce"])
def test_each_kind_refuses_a_bundled_domain_before_running_a_control(calibrate, tmp_path):
    with pytest.raises(ValueError, match="is judged by the metric cards' bars"):
        calibrate("morpho", "quick", tmp_path)
    assert not any(tmp_path.iterdir())  # no control ran


def test_only_the_placements_with_a_bar_are_kept_and_none_at_all_is_an_error_naming_why():
    from cfcheck.calibration.placement import Placement, barred_or_raise
    from cfcheck.core.thresholds import Bar

    placed = {
        "d1": Placement(Bar(2.0, "max"), "between identity and noise", "between"),
        "cld": Placement(None, "the controls overlap", "none"),
    }
    assert barred_or_raise(placed, {"cld": "the controls overlap"}, "mine", "v.json", "SCM score") == {
        "d1": (Bar(2.0, "max"), "between identity and noise")
    }
    with pytest.raises(RuntimeError) as caught:
        barred_or_raise({"cld": placed["cld"]}, {"cld": "the controls overlap"}, "mine", "v.json", "SCM score")
    message = str(caught.value)
    assert message.startswith("no SCM score earned a bar on domain 'mine'")
    assert "values are in v.json" in message and "cld: the controls overlap" in message
