"""The removal benchmarks' engine: ROAR, ROAD and GOAR curves for one attribution task.

A removal task's method outputs are the attributions of ``removal_train`` training inputs
and ``removal_test`` scored inputs (the task and the task it needs). From them,
:func:`removal_curve` computes one strategy's curve (the pure perturbations are in
:mod:`cfcheck.metrics.removal_curves`):

* ``roar``: per fraction, the ranked pixels of train and test inputs are set to the training
  mean per channel, the domain's ``retrained`` model is retrained on the removed training
  inputs, and the curve holds whether it classifies each removed test input correctly;
* ``road``: per fraction, the ranked test pixels are filled by noisy linear imputation and the
  explained model classifies them (no retraining, as Rong et al.);
* ``goar``: per strength, x − s·a/‖a‖ is projected by the domain's diffusion model, the model
  is retrained on the projected training inputs, and the curve holds whether each test input
  has been misclassified at this strength or a lower one.

Pixel rankings use the signed attribution summed over channels (ROAD's convention), on the
domain's ``pixel_grid`` when its inputs are not images. Level 0 is the unremoved data (the
model retrained on clean inputs; for ROAD the explained model on clean inputs). The same
curve for cfcheck's seeded random attribution is the baseline every method is compared with.
Retraining reuses the ``retrained`` model's recipe with ``retrain_epochs`` epochs of batches of 32. ROAR and
GOAR retrain ``retraining_draws`` times per level (:func:`removal_curves`), draw k with its own seed
(:func:`retraining_seed`: draw 0 is ``REMOVAL_SEED`` + the run's seed); the method's curve and the random
attribution's share each draw's seed, so within a draw two curves differ only by their data, and a gap's
draws × inputs table gives the crossed interval over both. GOAR's projections do not depend on the draw:
they are computed once per level and only the retraining is repeated.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from cfcheck.core.seeds import Stream, seeded
from cfcheck.kinds.attribution.section import MAX_RETRAINING_DRAWS
from cfcheck.kinds.base import Run
from cfcheck.metrics.key import MetricKey

if TYPE_CHECKING:
    from cfcheck.domains.base import Domain

__all__ = [
    "RETRAINED",
    "RemovalCurve",
    "RemovalData",
    "STRATEGIES",
    "as_pixel_grid",
    "classified_correctly",
    "draw_areas",
    "removal_curve",
    "removal_curves",
    "removal_key",
    "removal_scale",
    "removal_gap",
    "retrain",
    "retraining_seed",
    "run_removal_scale",
]


#: strategy → the orders it is run in
STRATEGIES = {"roar": ("morf", "lerf"), "road": ("morf", "lerf"), "goar": ("morf",)}
#: the seed of every retraining and of the noise the strategies draw, plus the run's seed (fixed within a
#: run: curves differ by data only; seed 0 keeps REMOVAL_SEED itself)
REMOVAL_SEED = 20_231
#: the removal engine's seeds from a run's or task's seed: its retraining, its removal orders' ties
RETRAINING = Stream("removal retraining", start=REMOVAL_SEED)
#: the seeds of a run's further retraining draws (draw k ≥ 1 of run seed s: s·1000 + 1,020,231 + k):
#: disjoint from every run's draw 0 and, below MAX_RETRAINING_DRAWS draws, from each other
RETRAINING_DRAWS = Stream("removal retraining draws", stride=MAX_RETRAINING_DRAWS, start=1_020_231)
#: the strategies that retrain a model per level (and so draw their retrainings)
RETRAINED = ("roar", "goar")
#: the batch size of every retraining
RETRAIN_BATCH = 32


def removal_key(strategy: str, measure: str, order: str) -> MetricKey:
    """The key a removal score is recorded under: card ``<strategy>_<measure>`` (``area``, ``gap``),
    variant the order, except for a strategy run in one order only (GOAR: ``goar_gap``, no variant)."""
    if strategy not in STRATEGIES or order not in STRATEGIES[strategy]:
        raise ValueError(f"no removal strategy {strategy!r} in order {order!r}; known: {STRATEGIES}")
    return MetricKey(f"{strategy}_{measure}", order if len(STRATEGIES[strategy]) > 1 else None)


@dataclass(frozen=True)
class RemovalData:
    """Inputs, labels and attributions of a removal task (train and test parts) on ``domain``
    (the domain object)."""

    domain: Any
    model: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    a_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    a_test: torch.Tensor


@dataclass(frozen=True)
class RemovalCurve:
    """One strategy's curve: ``outcomes[ℓ, i]`` for level ``levels[ℓ]`` and test input i.

    For ROAR and ROAD an outcome is 1 where the input is classified correctly; for GOAR it is
    1 where it has been misclassified at this level or an earlier one (Park et al. §4.3).
    """

    strategy: str
    order: str
    levels: tuple[float, ...]
    outcomes: torch.Tensor  # float64 L×N

    @property
    def heights(self) -> list[float]:
        return [float(v) for v in self.outcomes.mean(1)]


def as_pixel_grid(run: Run, domain: Any, x: torch.Tensor) -> torch.Tensor:
    """Inputs as N×C×H×W for pixel removal (vectors laid out on the domain's ``pixel_grid``)."""
    if x.dim() == 4:
        return x
    from cfcheck.kinds.attribution.capabilities import PixelGrid

    grid = domain.pixel_grid if isinstance(domain, PixelGrid) else None
    if grid is None:
        raise ValueError(
            f"domain {domain.name!r} inputs are {tuple(x.shape[1:])}, not images, and it declares no pixel_grid"
        )
    return x.reshape(x.shape[0], *grid)


def retraining_seed(seed: int, draw: int) -> int:
    """The retraining seed of draw ``draw`` of run seed ``seed``.

    Args:
        seed: the run's seed, int ≥ 0.
        draw: the draw's index, 0 ≤ draw < MAX_RETRAINING_DRAWS; draw 0 is the run's own seed
            (``REMOVAL_SEED`` + seed), so a one-draw run retrains as it always has.

    Returns:
        The seed; distinct for distinct (seed, draw) pairs.

    Example:
        >>> retraining_seed(0, 0), retraining_seed(1, 0), retraining_seed(0, 1), retraining_seed(1, 2)
        (20231, 20232, 1020232, 1021233)
    """
    for name, value in (("seed", seed), ("draw", draw)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"`{name}` must be an int >= 0, got {value!r}")
    if draw >= MAX_RETRAINING_DRAWS:
        raise ValueError(f"`draw` must be below {MAX_RETRAINING_DRAWS}, got {draw}")
    return seeded(seed, RETRAINING) if draw == 0 else seeded(seed, RETRAINING_DRAWS, draw)


def retrain(run: Run, domain: Any, images: torch.Tensor, labels: torch.Tensor, draw: int = 0) -> torch.nn.Module:
    from cfcheck.models.classifiers.recipes import model_specs
    from cfcheck.models.classifiers.training import fit

    name = domain.model_roles["retrained"][0]
    spec = model_specs(domain)[name]
    epochs = run.profile.section("attribution").retrain_epochs
    # batches of 32: a few thousand inputs still give the optimiser enough steps (measured: the
    # bundled digit CNN reaches 0.97 test accuracy from 1,000 clean images in 8 epochs, 9 s on one thread)
    recipe = dataclasses.replace(
        spec.recipe,
        seed=retraining_seed(run.seed, draw),
        epochs=epochs,
        batch_size=RETRAIN_BATCH,
        select_on="last",
        n=None,
    )
    spec = dataclasses.replace(spec, recipe=recipe, logit_calibration=None)
    return fit(spec, _TrainingSet(images, labels), None, device=run.device, log=lambda _: None)


@dataclass(frozen=True)
class _TrainingSet:
    images: torch.Tensor
    labels: torch.Tensor


def classified_correctly(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    from cfcheck.models.inference import batched_logits

    return (batched_logits(model, x, batch_size=500).argmax(1) == y).to(torch.float64)


def removal_scale(data: RemovalData) -> float:
    """GOAR's unit of strength: the median distance from a test input to the nearest training
    input of another class (how far an input must move to look like another class)."""
    train = data.x_train.flatten(1).to(torch.float64)
    distances = []
    for chunk, labels in zip(data.x_test.flatten(1).to(torch.float64).split(500), data.y_test.split(500)):
        d = torch.cdist(chunk, train)
        d[labels[:, None] == data.y_train[None, :]] = float("inf")
        distances.append(d.min(1).values)
    return float(torch.cat(distances).median())


def removal_curve(run: Run, data: RemovalData, strategy: str, order: str, draw: int = 0) -> RemovalCurve:
    """The ``strategy`` curve (``"roar"``, ``"road"`` or ``"goar"``) in ``order`` for ``data``, with the
    models of retraining draw ``draw`` (ROAD retrains nothing: every draw is the same curve)."""
    return _curves(run, data, strategy, order, (draw,))[0]


def removal_curves(run: Run, data: RemovalData, strategy: str, order: str) -> tuple[RemovalCurve, ...]:
    """The curves of every retraining draw of the run's profile (``retraining_draws``), draw 0 first;
    one curve for ROAD, which retrains nothing."""
    draws = run.profile.section("attribution").retraining_draws if strategy in RETRAINED else 1
    return tuple(_curves(run, data, strategy, order, tuple(range(draws))))


def draw_areas(curves: tuple[RemovalCurve, ...]) -> torch.Tensor:
    """The per-input areas of each draw's curve: float64 draws × inputs."""
    from cfcheck.metrics.removal_curves import curve_area

    return torch.stack([curve_area(curve.outcomes, curve.levels) for curve in curves])


def _curves(run: Run, data: RemovalData, strategy: str, order: str, draws: tuple[int, ...]) -> list[RemovalCurve]:
    from cfcheck.metrics.removal import noisy_linear_imputation, removal_mask
    from cfcheck.metrics.removal_curves import cumulative_errors, feature_removal, fixed_value_removal
    from cfcheck.models.generative.diffusion.projection import manifold_projection

    if strategy not in STRATEGIES or order not in STRATEGIES[strategy]:
        raise ValueError(f"unknown removal {strategy!r}/{order!r}; expected one of {STRATEGIES}")
    section = run.profile.section("attribution")
    generator = torch.Generator().manual_seed(seeded(run.seed, RETRAINING))
    shape = data.x_test.shape[1:]
    rows: dict[int, list[torch.Tensor]] = {draw: [] for draw in draws}
    if strategy == "road":
        explained = run.zoo(data.domain)[data.model]
        levels = (0.0, *section.removal_fractions)
        x, a = as_pixel_grid(run, data.domain, data.x_test), as_pixel_grid(run, data.domain, data.a_test)
        for fraction in levels:
            # ROAD breaks ties at random (its reference's fixed noise map), under the run's seed
            mask = removal_mask(a, fraction, order, tie_seed=seeded(run.seed, RETRAINING))
            imputed = noisy_linear_imputation(x, mask, generator=generator) if fraction > 0 else x
            rows[draws[0]].append(classified_correctly(explained, imputed.reshape(-1, *shape), data.y_test))
        return [RemovalCurve(strategy, order, levels, torch.stack(rows[draws[0]]))] * len(draws)  # nothing retrained
    if strategy == "roar":
        levels = (0.0, *section.removal_fractions)
        x_train, a_train = as_pixel_grid(run, data.domain, data.x_train), as_pixel_grid(run, data.domain, data.a_train)
        x_test, a_test = as_pixel_grid(run, data.domain, data.x_test), as_pixel_grid(run, data.domain, data.a_test)
        fill = x_train.mean(dim=(0, 2, 3))
        for fraction in levels:
            removed_train = fixed_value_removal(x_train, removal_mask(a_train, fraction, order), fill)
            removed_test = fixed_value_removal(x_test, removal_mask(a_test, fraction, order), fill)
            for draw in draws:
                model = (
                    _clean_model(run, data, draw)
                    if fraction == 0
                    else retrain(run, data.domain, removed_train.reshape(-1, *shape), data.y_train, draw)
                )
                rows[draw].append(classified_correctly(model, removed_test.reshape(-1, *shape), data.y_test))
        return [RemovalCurve(strategy, order, levels, torch.stack(rows[draw])) for draw in draws]
    denoiser = _denoiser(run, data.domain)
    scale = run_removal_scale(run, data)
    levels = (0.0, *section.goar_levels_for(data.domain))
    for level in levels:
        if level == 0:
            for draw in draws:
                rows[draw].append(classified_correctly(_clean_model(run, data, draw), data.x_test, data.y_test))
            continue
        strength = level * scale
        projected = [  # one projection per level, whatever the draw (the generator runs as for one draw)
            manifold_projection(feature_removal(x, a, strength), strength, denoiser, generator=generator)
            for x, a in ((data.x_train, data.a_train), (data.x_test, data.a_test))
        ]
        for draw in draws:
            model = retrain(run, data.domain, projected[0], data.y_train, draw)
            rows[draw].append(classified_correctly(model, projected[1], data.y_test))
    return [RemovalCurve(strategy, order, levels, cumulative_errors(torch.stack(rows[draw]))) for draw in draws]


def run_removal_scale(run: Run, data: RemovalData) -> float:
    """:func:`removal_scale` of ``data``, computed once per run (GOAR's curve and its leakage share it)."""
    return run.memo(("removal_scale", data.domain.name, data.model, len(data.x_test)), lambda: removal_scale(data))


def _clean_model(run: Run, data: RemovalData, draw: int = 0) -> torch.nn.Module:
    """The model of retraining draw ``draw`` on unremoved training inputs (shared by every method of the run)."""
    key = (
        "removal_clean_model",
        data.domain.name,
        data.model,
        len(data.x_train),
        float(data.x_train.sum()),
        run.seed,
        draw,
    )
    return run.memo(key, lambda: retrain(run, data.domain, data.x_train, data.y_train, draw))


def _denoiser(run: Run, domain: Domain) -> Any:
    """The domain's exact denoiser if it has one, else its bundled diffusion model."""
    from cfcheck.kinds.attribution.capabilities import ExactDenoiser

    if isinstance(domain, ExactDenoiser):
        return run.memo(("exact_denoiser", domain.name), domain.exact_denoiser)
    diffusion = domain.model_roles.get("diffusion")
    if not diffusion:
        raise ValueError(
            f"domain {domain.name!r} has neither an exact denoiser nor a diffusion model: GOAR cannot project"
        )
    return run.zoo(domain)[diffusion[0]]


def missing_for(run: Run | None, domain: Any, strategy: str) -> str | None:
    """Why ``domain`` (the object) cannot run ``strategy`` (None: it can): ROAR and GOAR retrain the
    domain's ``retrained`` model by its recipe; GOAR also projects with an exact denoiser or a diffusion model."""
    if strategy in RETRAINED and not domain.model_roles.get("retrained"):
        return (
            f"{strategy.upper()} retrains a model on removed data: domain {domain.name!r} declares no 'retrained' "
            "model with a training recipe"
        )
    from cfcheck.kinds.attribution.capabilities import ExactDenoiser

    if strategy == "goar" and not domain.model_roles.get("diffusion") and not isinstance(domain, ExactDenoiser):
        return f"GOAR projects onto the data manifold: domain {domain.name!r} has no diffusion model or exact denoiser"
    return None


def removal_gap(strategy: str, order: str, area: Any, random_area: Any) -> Any:
    """Per-input gap to the random attribution, positive = better than random: less accuracy left
    after removing the most relevant pixels, more after removing the least relevant ones, more
    inputs misclassified by GOAR."""
    return random_area - area if (strategy != "goar" and order == "morf") else area - random_area
