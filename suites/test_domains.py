"""Every domain of the run loads: its files decode, its splits hold images in [0, 1] with one label
each, every model its role map names is in its store and loads, its classifiers give one score per
class, and its splits are large enough for the run's profile. A domain that could not be resolved or
fails a check fails here, once, with the message that says why; none of its suites run (each is
skipped, pointing here) while the run's other domains are scored as usual. A split too small for
some scores only (an attribute domain's realism reference) is a warning here (:class:`DomainWarning`):
the domain is scored, and those scores are skipped with the reason."""

from __future__ import annotations

import warnings

import pytest

from cfcheck.domains.checks import DomainWarning
from cfcheck.metrics.key import MetricKey


def _does_not_load(score, spec, reason):
    """Record ``domain:<spec>`` as an error (a check, not a metric: it has no card) and fail."""
    __tracebackhide__ = True
    score.error(MetricKey("domain", spec), reason)
    pytest.fail(f"domain {spec} cannot be used: {reason}", pytrace=False)


def test_domain_loads(cfcheck_session, cfcheck_domain_spec, cfcheck_score):
    broken = cfcheck_session.broken_domains.get(cfcheck_domain_spec)
    if broken is not None:
        _does_not_load(cfcheck_score, cfcheck_domain_spec, broken)
    reason = cfcheck_session.unusable_reason(cfcheck_domain_spec)
    if reason is not None:
        _does_not_load(cfcheck_score, cfcheck_domain_spec, reason)
    for warning in cfcheck_session.load_warnings(cfcheck_domain_spec):
        warnings.warn(DomainWarning(warning), stacklevel=1)
