"""The vce part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass

#: Väth et al. §4: "ideal" (the committee's most-confused class) and "other" (a random other class)
PAIR_SETS = ("ideal", "other")


@dataclass(frozen=True)
class VCESection:
    """The VCE part of a profile."""

    n_per_source: int  # scored images per class and task
    classifiers: tuple[str, ...] | None = None  # None: every explained classifier of the domain
    pair_sets: tuple[str, ...] = PAIR_SETS

    def validate(self) -> None:
        if self.n_per_source < 1:
            raise ValueError(f"n_per_source must be >= 1, got {self.n_per_source}")
        unknown = set(self.pair_sets) - set(PAIR_SETS)
        if unknown:
            raise ValueError(f"pair_sets has unknown entries {sorted(unknown)}; expected some of {PAIR_SETS}")


SECTION_DEFAULTS = {
    "quick": VCESection(n_per_source=12),
    "standard": VCESection(n_per_source=40),
    "full": VCESection(n_per_source=100),
}
