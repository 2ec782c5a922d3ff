"""Realism of SCM counterfactuals against real images *with the counterfactual parents*.

Melistas et al. (2024, §3) score FID of counterfactuals against the real test set; that
reference has the observed parents' distribution, so an effective intervention (do(digit = 7)
on every input) is penalised for shifting the mix, and an identity method is rewarded. A
procedural domain can do better: it renders, for every counterfactual, real images with
exactly the counterfactual parents (propagated by the SCM) and a fresh style
(``resample_with_parents``, capability ``parent_resampling``). Those images are the reference
*and* the real-vs-real floors (several disjoint draws of n), with the counterfactuals'
continuous parents by construction. The score is conditional on the categorical parent
(e.g. a digit): per value, the counterfactuals against the real images with that value,
pooled with weights n_k / n, as VCE's ``fid_target``. One statistic over the whole set would
miss a method that shows the wrong digits while keeping the digit mix (do(digit) to uniformly
drawn targets keeps it uniform): on a bundled digit domain (README, SCM realism), real images
labelled with the next digit score well above the real-vs-real floors. Score and floors go through the same
engine as VCE realism (:func:`cfcheck.metrics.reference_sets.score_realism`).

A domain that cannot render (a user's domain of real images) gives instead, per counterfactual, real
images of its reference split whose attributes match the counterfactual's after propagation
(:mod:`cfcheck.kinds.scm.realism_matching`); the rest is the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import torch

from cfcheck.core.seeds import REALISM_DRAWS, seeded
from cfcheck.domains.base import PARENT_RESAMPLING, require
from cfcheck.kinds.scm.realism_matching import match_reference, reference_shortfall
from cfcheck.metrics.reference_sets import FLOOR_DRAWS, REFERENCE_PER_SAMPLE, RealismScore, score_realism

__all__ = ["RealismSets", "reference_missing", "scm_realism", "scm_realism_sets"]

#: Added to the task seed for the reference renders, far from the seeds methods draw from.
_REFERENCE_SEED_OFFSET = 1_000_003


def matching_parent(domain: Any) -> str | None:
    """The categorical parent the reference is matched on (the first one), if any."""
    return next(iter(domain.categorical_factors), None)


def reference_renders(domain: Any, parents: dict[str, torch.Tensor], copies: int, seed: int) -> torch.Tensor:
    """``copies`` real images per counterfactual, rendered with its parents and fresh styles
    (copy-major: rows j·n … (j+1)·n − 1 are copy j)."""
    require(domain, PARENT_RESAMPLING)
    repeated = {name: value.repeat(copies) for name, value in parents.items()}
    return domain.resample_with_parents(repeated, seed)


def reference_missing(result: Any) -> str | None:
    """Why the realism of ``result`` cannot be scored for want of real images (None: it can): on a
    domain that cannot render, the reference split holds too few real images matching its
    counterfactuals' attributes (:func:`~cfcheck.kinds.scm.realism_matching.reference_shortfall`;
    the domain's load check warns of it)."""
    domain = result.domain
    if PARENT_RESAMPLING in domain.capabilities:
        return None
    keep = result.valid
    targets = {name: value[keep] for name, value in result.target_parents.items()}
    return reference_shortfall(domain, targets, matching_parent(domain))


@dataclass(frozen=True)
class RealismSets:
    """What an SCM realism score compares: the counterfactuals' embedding features and classes
    (the matched categorical parent, or 0), and the real images rendered with their parents (or, on
    a domain that cannot render, matched with them: ``exact_match`` is the share in their
    counterfactual's exact cell; None for rendered ones)."""

    fake_features: torch.Tensor
    fake_classes: torch.Tensor
    real_features: torch.Tensor
    real_classes: torch.Tensor
    conditional: bool
    exact_match: float | None = None


def scm_realism_sets(result: Any, zoo: Any) -> RealismSets:
    """The sets :func:`scm_realism` scores for ``result``, rendered and embedded once per task
    (the FID and KID tests of a task share them).

    Raises:
        ValueError: with fewer than two counterfactuals (nothing to compare as a set).
        ValueError: where the reference split holds too few real images matching the counterfactuals.
    """
    keep = result.valid
    n = int(keep.sum())
    if n < 2:
        raise ValueError(f"{n} counterfactuals produced; realism needs a set of ≥ 2")

    def build() -> RealismSets:
        domain = result.domain
        parents = {name: value[keep] for name, value in result.target_parents.items()}
        match = matching_parent(domain)
        classes = parents[match].long() if match is not None else torch.zeros(n, dtype=torch.long)
        seed = seeded(result.task.seed, REALISM_DRAWS, _REFERENCE_SEED_OFFSET)
        fakes = zoo.embed(result.x_cf[keep])
        if PARENT_RESAMPLING not in domain.capabilities:  # real data: matched real images
            matched = match_reference(domain, parents, match, torch.Generator().manual_seed(seed))
            real = zoo.realism_pool[0][matched.rows]
            return RealismSets(fakes, classes, real, matched.classes, match is not None, matched.exact)
        copies = REFERENCE_PER_SAMPLE + FLOOR_DRAWS
        real = reference_renders(domain, parents, copies, seed)
        return RealismSets(fakes, classes, zoo.embed(real), classes.repeat(copies), match is not None)

    return cast(RealismSets, result.evaluated("realism sets (embedded counterfactuals, rendered reference)", build))


def scm_realism(result: Any, zoo: Any, statistic: Any, *, n_resamples: int, ci_method: str) -> RealismScore:
    """FID or KID (``statistic``) of the non-abstained counterfactuals of ``result`` against real
    images with their counterfactual parents, with real-vs-real floors at the same n.

    Raises:
        ValueError: with fewer than two counterfactuals (nothing to compare as a set).
        MissingCapability: for a domain that cannot render images from given parents.
    """
    sets = scm_realism_sets(result, zoo)
    seed = result.task.seed
    return score_realism(
        statistic,
        sets.real_features,
        sets.real_classes,
        sets.fake_features,
        sets.fake_classes,
        conditional=sets.conditional,
        generator=torch.Generator().manual_seed(seeded(seed, REALISM_DRAWS, 2)),
        n_resamples=n_resamples,
        seed=seed,
        ci_method=ci_method,
    )
