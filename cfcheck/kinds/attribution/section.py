"""The attribution part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttributionSection:
    """The attribution part of a profile."""

    n_inputs: int  # scored images per model and seed
    models: tuple[str, ...] | None = None  # None: every explained classifier of the domain

    def validate(self) -> None:
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {self.n_inputs}")


SECTION_DEFAULTS = {
    "quick": AttributionSection(n_inputs=50, models=("cnn",)),
    "standard": AttributionSection(n_inputs=200),
    "full": AttributionSection(n_inputs=500),
}
