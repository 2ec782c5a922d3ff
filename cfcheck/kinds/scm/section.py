"""The scm part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SCMSection:
    """The SCM part of a profile."""

    n_inputs: int  # scored images per intervention and seed
    interventions: tuple[str, ...] | None = None  # None: every factor of the domain

    def validate(self) -> None:
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {self.n_inputs}")


SECTION_DEFAULTS = {
    "quick": SCMSection(n_inputs=100),
    "standard": SCMSection(n_inputs=200),
    "full": SCMSection(n_inputs=500),
}
