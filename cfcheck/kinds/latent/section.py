"""The latent part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass

#: Bex et al.'s confidence levels of the explained classifier (appendix A.3.2)
CONFIDENCE_LEVELS = (0.1, 0.4, 0.6, 0.9)
#: counterfactuals per input (Bex et al.: 10)
COUNTERFACTUALS_PER_INPUT = 10


@dataclass(frozen=True)
class LatentSection:
    """The latent part of a profile.

    Attributes:
        n_inputs: inputs per task, spread over the (confidence level, correct/incorrect) buckets.
        counterfactuals_per_input: K, how many latent counterfactuals a method returns per input.
        confidence_levels: levels of p(class 1) the inputs are drawn near.
        variants: the domain's variants to run (None: all of them).
    """

    n_inputs: int
    counterfactuals_per_input: int = COUNTERFACTUALS_PER_INPUT
    confidence_levels: tuple[float, ...] = CONFIDENCE_LEVELS
    variants: tuple[str, ...] | None = None

    def validate(self) -> None:
        if self.n_inputs < 1:
            raise ValueError(f"n_inputs must be >= 1, got {self.n_inputs}")
        if self.counterfactuals_per_input < 1:
            raise ValueError(f"counterfactuals_per_input must be >= 1, got {self.counterfactuals_per_input}")
        levels = tuple(self.confidence_levels)
        if not levels or not all(0.0 < float(level) < 1.0 for level in levels):
            raise ValueError(f"confidence_levels must be probabilities in (0, 1), got {levels}")


SECTION_DEFAULTS = {
    "quick": LatentSection(n_inputs=32),
    "standard": LatentSection(n_inputs=96),
    "full": LatentSection(n_inputs=800),  # Bex et al.: 800 inputs (100 per bucket)
}
