"""Bex et al.'s informed search (IS): the oracle explainer that knows the spurious attributes.

IS knows the data-generating process (Bex et al.'s Figure 1a), so it perturbs only the
attributes spuriously correlated with the label (the scenario's spurious fonts). A real
explainer never has that knowledge; cfcheck hands it to this oracle control alone, through the
``oracle_domain`` keyword the latent kind passes to a method that names it (the variant's
domain, which must offer ``spurious_categories``: group name → per-label category indices, and
``latent_layout()`` with that categorical group). For each input z with predicted class s:

1. candidates: z with the group's embedding replaced by each spurious category, those
   correlated with a label other than s first (they are the ones expected to flip the
   classifier), then those of s; the input's own category is skipped;
2. the search queries the classifier: candidates that flip it come first (most confident
   first), then the others in the same order of confidence;
3. the K counterfactuals are the first K (cycling when there are fewer candidates than K; a
   repeated counterfactual adds nothing to S#).

The method is deterministic (``rng`` is accepted and unused).

``explain(z, latent_classifier, generator, *, rng=None, oracle_domain) -> z_cf`` (N×K×D).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from cfcheck.kinds.latent.methods.contract import LatentSpaceExplainer
from cfcheck.kinds.latent.methods.search import two_class_logits
from cfcheck.kinds.method_helpers import check_positive

__all__ = ["InformedSearch"]


def _spurious_candidates(z: torch.Tensor, source: torch.Tensor, oracle_domain: Any) -> torch.Tensor:
    """N×C×D: each input with one spurious category swapped in (other labels' categories first)."""
    spurious = getattr(oracle_domain, "spurious_categories", None)
    if not spurious:
        raise TypeError(f"informed search needs a domain with spurious_categories; {oracle_domain!r} has none")
    groups = {group.name: group for group in oracle_domain.latent_layout().categorical}
    rows = []
    for n in range(len(z)):
        own_label, options = int(source[n]), []
        for name, per_label in spurious.items():
            group = groups[name]
            start, stop = group.columns
            current = int((group.embedding.to(z) - z[n, start:stop]).norm(dim=1).argmin())
            ordered = [c for label, cats in enumerate(per_label) if label != own_label for c in cats]
            ordered += list(per_label[own_label]) if own_label < len(per_label) else []
            for category in ordered:
                if category != current:
                    candidate = z[n].clone()
                    candidate[start:stop] = group.embedding[category].to(z)
                    options.append(candidate)
        if not options:
            raise ValueError("informed search found no spurious category to change")
        rows.append(torch.stack(options))
    width = max(len(r) for r in rows)
    return torch.stack([r[torch.arange(width) % len(r)] for r in rows])


class InformedSearch(LatentSpaceExplainer):
    """The IS oracle (see the module docstring).

    Args:
        k: counterfactuals per input.
    """

    def __init__(self, k: int = 10) -> None:
        check_positive("k", k, integer=True)
        self.k = int(k)

    def explain(
        self,
        z: torch.Tensor,
        latent_classifier: nn.Module,
        generator: nn.Module,
        *,
        rng: torch.Generator | None = None,
        oracle_domain: Any = None,
    ) -> torch.Tensor:
        """The kind's call, with the oracle's ``oracle_domain`` (required; see the module docstring)."""
        if oracle_domain is None:
            raise TypeError(
                "informed search is an oracle: it needs oracle_domain= (cfcheck's latent kind passes "
                "the variant's domain to a method that names that keyword), but got none"
            )
        return self._run(z, latent_classifier, generator, rng, oracle_domain=oracle_domain)

    @torch.no_grad()
    def counterfactuals(
        self,
        z: torch.Tensor,
        latent_classifier: nn.Module,
        generator: nn.Module,
        rng: torch.Generator,
        oracle_domain: Any = None,
    ) -> torch.Tensor:
        z = z.detach()
        source = two_class_logits(latent_classifier, z, "informed search").argmax(1)
        candidates = _spurious_candidates(z, source, oracle_domain)
        n, c, d = candidates.shape
        probability = torch.softmax(latent_classifier(candidates.reshape(n * c, d)), 1).reshape(n, c, 2)
        other = probability.gather(2, (1 - source)[:, None, None].expand(-1, c, 1)).squeeze(2)
        rank = other + (other > 0.5).to(other)  # flips (> 1) before the rest, each by confidence
        order = rank.argsort(dim=1, descending=True, stable=True)
        chosen = order[:, torch.arange(self.k) % c]
        return candidates.gather(1, chosen[:, :, None].expand(-1, -1, d))
