"""The attribution part of a run profile (torch-free: profiles read it without loading models)."""

from __future__ import annotations

from dataclasses import dataclass

#: GOAR strengths (multiples of the domain's removal scale) for a domain that names none
DEFAULT_GOAR_LEVELS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
#: retraining draws per run seed are seeded apart up to this many (the removal engine's RETRAINING_DRAWS stride)
MAX_RETRAINING_DRAWS = 1000


@dataclass(frozen=True)
class AttributionSection:
    """The attribution part of a profile.

    The removal benchmarks (ROAR, ROAD, GOAR) attribute ``removal_train`` training inputs and
    ``removal_test`` scored inputs per model and seed, remove at each of ``removal_fractions``
    (ROAR, ROAD: shares of the pixels) and ``goar_levels`` (GOAR: multiples of the domain's
    removal scale, the median distance from a scored input to the nearest training input of
    another class), and retrain the domain's ``retrained`` model for ``retrain_epochs``.

    The model-randomisation similarity compares the trained classifier's maps with those of
    ``randomisation_draws`` random networks (the domain's random classifier and re-initialisations
    of the trained one; :mod:`cfcheck.kinds.attribution.randomisation`), so its interval covers
    the draw of the random network as well as the inputs.

    ``goar_levels`` of None (the default) takes each domain's own levels (a domain's optional
    ``goar_levels`` attribute, else :data:`DEFAULT_GOAR_LEVELS`): a toy domain may need ten levels
    to order its degraded features where an image domain's quick run affords four; a profile that sets
    ``goar_levels`` uses them on every domain.
    """

    n_inputs: int  # scored images per model and seed
    #: the explained classifiers to attribute, in the domains that have them (a domain with none
    #: of them attributes all its own); None: every explained classifier of every domain
    models: tuple[str, ...] | None = None
    removal_train: int = 2000
    removal_test: int = 1000
    removal_fractions: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    goar_levels: tuple[float, ...] | None = None
    retrain_epochs: int = 8
    randomisation_draws: int = 5
    #: retrainings per ROAR/GOAR level (3: the fewest whose crossed interval has a usable t quantile)
    retraining_draws: int = 3

    def validate(self) -> None:
        for name in (
            "n_inputs",
            "removal_train",
            "removal_test",
            "retrain_epochs",
            "randomisation_draws",
            "retraining_draws",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.retraining_draws >= MAX_RETRAINING_DRAWS:
            raise ValueError(f"retraining_draws must be below {MAX_RETRAINING_DRAWS}, got {self.retraining_draws}")
        for name in ("removal_fractions", "goar_levels"):
            if getattr(self, name) is None and name == "goar_levels":
                continue
            levels = tuple(getattr(self, name))
            if not levels or any(b <= a for a, b in zip(levels, levels[1:])) or levels[0] <= 0:
                raise ValueError(f"{name} must be positive and increasing, got {levels}")
        if max(self.removal_fractions) >= 1:
            raise ValueError(
                f"removal_fractions must lie below 1 (something must be kept), got {self.removal_fractions}"
            )

    def goar_levels_for(self, domain: object) -> tuple[float, ...]:
        """The GOAR strengths used on ``domain``: the profile's, else the domain's, else the default."""
        if self.goar_levels is not None:
            return tuple(self.goar_levels)
        from cfcheck.kinds.attribution.capabilities import GoarLevels

        return tuple(domain.goar_levels) if isinstance(domain, GoarLevels) else DEFAULT_GOAR_LEVELS


SECTION_DEFAULTS = {
    # quick: GOAR's projection costs ~5 ms per image and DDIM step on one thread (4 levels of ~10 steps,
    # for the method's and the random attribution's curves): 900 images keep a bundled 32×32 domain's run near 5 minutes
    "quick": AttributionSection(n_inputs=50, models=("cnn",), removal_train=600, removal_test=300),
    "standard": AttributionSection(n_inputs=200),
    "full": AttributionSection(
        n_inputs=500, removal_train=10000, removal_test=2000, retrain_epochs=10, randomisation_draws=10
    ),
}
