"""The reference models of a domain, loaded lazily, once per session, on the session's device."""

from __future__ import annotations

from functools import cached_property

import torch

from cfcheck.models import registry


class ModelZoo:
    """Name → verified, frozen reference model; also the roles suites ask for."""

    def __init__(self, domain: str, device: torch.device) -> None:
        self.domain = domain
        self.device = device
        self._models: dict[str, torch.nn.Module] = {}

    def __getitem__(self, name: str) -> torch.nn.Module:
        if name not in self._models:
            self._models[name] = registry.load_model(name, domain=self.domain, device=self.device)
        return self._models[name]

    @cached_property
    def oracles(self) -> tuple[str, ...]:
        """The oracle committee (never an explained classifier)."""
        return tuple(registry.available_models(self.domain, role="oracle"))

    @cached_property
    def attribute_oracles(self) -> dict[str, str]:
        """Attribute name → model name, for the Label Variation Score."""
        names = registry.available_models(self.domain, role="attribute_oracle")
        return {registry.model_entry(n, domain=self.domain)["attribute"]: n for n in names}

    @property
    def embedding(self) -> torch.nn.Module:
        return self["embedding"]

    def hashes(self) -> dict[str, str]:
        """sha256 of every reference model of the domain (for the scorecard's provenance)."""
        return {
            f"{self.domain}/{name}": registry.model_entry(name, domain=self.domain)["sha256"]
            for name in registry.available_models(self.domain)
        }

    def features(self, images: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
        """Raw domain-embedding features (float64), the input of FID and KID."""
        return self.logits("embedding", images, batch_size).double()

    @torch.no_grad()
    def logits(self, name: str, images: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
        model = self[name]
        outputs = [
            model(images[i : i + batch_size].to(self.device)).float().cpu()
            for i in range(0, len(images), batch_size)
        ]
        return torch.cat(outputs) if outputs else torch.empty(0)
