"""Minimality of SCM counterfactuals: CLD (Melistas et al. 2024 §3.2, eq. 9).

The distance is the KL divergence between the posteriors of the domain's unconditional VAE (its
model role ``minimality_vae``), ``d(a, b) = KL(q(z | a) ‖ q(z | b))`` with the factual second.
The real images x' are the first :data:`POOL_SIZE` images of the domain's reference split (real,
never trained on, never scored; all of a smaller one, as a user's domain may have); a real image belongs to S_x (S_x*) when its value of the
intervened parent falls in the factual's (counterfactual's) bin, as :meth:`Domain.parent_bin`
gives it (10 bins for a continuous parent, the value itself for a categorical one).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch

from cfcheck.metrics.minimality import counterfactual_latent_divergence, gaussian_kl

__all__ = ["POOL_SIZE", "cld_scores"]

#: real images S_x and S_x* are drawn from (the reference split's first ones)
POOL_SIZE = 5000


@lru_cache(maxsize=4)
def _pool(zoo: Any, domain: Any) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
    """Posterior means and log-variances of the pool's images, and their parents."""
    split = domain.split_roles["reference"]
    images = domain.split(split, min(POOL_SIZE, len(domain.split(split).labels))).images
    mean, log_var = zoo.stored_posterior(images)  # the same in every session: kept on disk
    return mean, log_var, domain.parents(split, torch.arange(len(images)))


def cld_scores(result: Any, zoo: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(cld, P(S_x* ≤ div), P(S_x ≥ div))`` per counterfactual the method did not abstain on.

    Raises:
        KeyError: when the domain bundles no minimality VAE.
    """
    domain, parent, keep = result.domain, result.task.factor, result.valid
    mean_x, log_var_x = zoo.posterior(result.x[keep])
    mean_cf, log_var_cf = zoo.posterior(result.x_cf[keep])
    div = gaussian_kl(mean_cf, log_var_cf, mean_x, log_var_x)
    pool_mean, pool_log_var, pool_parents = _pool(zoo, domain)
    distances = gaussian_kl(pool_mean[None], pool_log_var[None], mean_x[:, None], log_var_x[:, None])
    pool_bins = domain.parent_bin(parent, pool_parents[parent])
    factual_bins = domain.parent_bin(parent, result.parents[parent][keep])
    counterfactual_bins = domain.parent_bin(parent, result.intervention[parent][keep])
    return counterfactual_latent_divergence(
        div.clamp_min(0.0),
        distances.clamp_min(0.0),
        pool_bins[None] == factual_bins[:, None],
        pool_bins[None] == counterfactual_bins[:, None],
    )
