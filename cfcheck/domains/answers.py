"""The answer capabilities of a domain, guarded: a method that calls them is noticed.

A domain's true counterfactual (and the counterfactual parents it is rendered from) is what the
engine scores a method against; a method that reads it gets a perfect scorecard without explaining
anything. :func:`guard_answer_methods` wraps those capabilities on every domain a run resolves (the
registry calls it), a user's domain as much as a bundled one, so that a read from the method's code
is counted (:mod:`cfcheck.core.answer_reads`) and its scorecard says the run is not a valid
submission. A bundled domain also reports reads in its own internals, for a method that imports them.
"""

from __future__ import annotations

from typing import Any

from cfcheck.core.answer_reads import ANSWER_MARK, reads_answer

__all__ = ["ANSWER_METHODS", "guard_answer_methods"]

#: the methods of a domain that return its answer (the capabilities the engine scores against)
ANSWER_METHODS = ("class_counterfactual", "intervention_counterfactual", "counterfactual_parents")

#: answer methods that are the answer only on a domain with this capability: counterfactual parents
#: propagated by the true SCM are the truth's factors, while a domain without a true counterfactual
#: (a user's attribute table with declared or fitted mechanisms) propagates through a public model
#: any method may use
_ANSWER_ONLY_WITH = {"counterfactual_parents": "intervention_counterfactual"}


def guard_answer_methods(domain: Any) -> Any:
    """Wrap each answer method of ``domain`` (:data:`ANSWER_METHODS`) that reports no reads of its own
    with one that does (counterfactual parents only on a domain with a true counterfactual); returns ``domain``. Idempotent; an object whose attributes cannot be set
    (slots, a frozen dataclass) is left as it is."""
    capabilities: frozenset[str] = frozenset(getattr(domain, "capabilities", ()))
    for name in ANSWER_METHODS:
        if name in _ANSWER_ONLY_WITH and _ANSWER_ONLY_WITH[name] not in capabilities:
            continue
        method = getattr(domain, name, None)
        if not callable(method) or getattr(method, ANSWER_MARK, None) is not None:
            continue
        try:
            object.__setattr__(domain, name, reads_answer(name)(method))
        except (AttributeError, TypeError):
            continue
    return domain
