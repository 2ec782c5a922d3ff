"""The latent part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LatentSection:
    """The latent part of a profile (used once a domain has a latent space)."""

    n_inputs: int

    def validate(self) -> None:
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {self.n_inputs}")


SECTION_DEFAULTS = {
    "quick": LatentSection(n_inputs=30),
    "standard": LatentSection(n_inputs=100),
    "full": LatentSection(n_inputs=300),
}
