"""cfcheck's own recipe function for a domain's models (:meth:`cfcheck.domains.base.BundledDomain.retrain`):
its classifiers and its generative models, each trained by cfcheck's recipes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cfcheck.core.retrain import RetrainRequest

if TYPE_CHECKING:
    from cfcheck.models.capabilities import ModelDomain

__all__ = ["train_with_cfcheck_recipes"]


def train_with_cfcheck_recipes(domain: ModelDomain, request: RetrainRequest) -> dict[str, dict[str, Any]]:
    """Retrain ``domain``'s models with cfcheck's recipes: its classifiers (its ``model_recipes()``)
    and its generative models (its ``generative_recipes()``, where it has one), all or
    ``request.only``.

    Args:
        domain: the domain object (``request.domain`` is its name).
        request: what to retrain, where and how.

    Returns:
        The new manifest entries.
    """
    from cfcheck.models.capabilities import GenerativeRecipes
    from cfcheck.models.classifiers.training import train_reference_models
    from cfcheck.models.generative import train_generative_models

    generative = set(domain.generative_recipes()) if isinstance(domain, GenerativeRecipes) else set()
    names = request.only
    classifier_names = None if names is None else [n for n in names if n not in generative]
    generative_names = None if names is None else [n for n in names if n in generative]
    entries: dict[str, dict[str, Any]] = {}
    if classifier_names is None or classifier_names:
        entries.update(
            train_reference_models(
                domain=domain,
                names=classifier_names,
                out_dir=request.out,
                smoke=request.smoke,
                device=request.device,
                log=request.log,
                num_threads=request.threads,
            )
        )
    if generative and (generative_names is None or generative_names):
        entries.update(
            train_generative_models(
                domain,
                generative_names,
                request.out,
                smoke=request.smoke,
                log=request.log,
                num_threads=request.threads,
            )
        )
    return entries
