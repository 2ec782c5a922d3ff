"""Every domain of the run loads: its splits hold images in [0, 1] with one label each, and every
model its role map names is in its store and loads. A domain that could not be resolved fails here,
with the message that says why, while the run's other domains are scored as usual."""

from __future__ import annotations

import pytest


def _does_not_load(score, spec, reason):
    """Record ``domain:<spec>`` as an error (a check, not a metric: it has no card) and fail."""
    __tracebackhide__ = True
    score.error(f"domain:{spec}", reason)
    pytest.fail(f"domain {spec} cannot be used: {reason}", pytrace=False)


def test_domain_loads(cfcheck_session, cfcheck_domain_spec, cfcheck_score):
    broken = cfcheck_session.broken_domains.get(cfcheck_domain_spec)
    if broken is not None:
        _does_not_load(cfcheck_score, cfcheck_domain_spec, broken)
    from cfcheck.domains.checks import domain_problems

    problems = domain_problems(cfcheck_session.domain(cfcheck_domain_spec))
    if problems:
        _does_not_load(cfcheck_score, cfcheck_domain_spec, "; ".join(problems))
