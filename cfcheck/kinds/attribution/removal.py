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
Retraining reuses the ``retrained`` model's recipe with ``retrain_epochs`` epochs of batches of 32 and one seed
per run, ``REMOVAL_SEED`` + the run's seed (so within a run two curves differ only by their data, and another
run's seed draws other retrainings: the calibration's seeds cover the retraining noise).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

from cfcheck.core.seeds import Stream, seeded
from cfcheck.kinds.attribution.baseline import random_attribution
from cfcheck.kinds.base import Run
from cfcheck.metrics.key import MetricKey

if TYPE_CHECKING:
    from cfcheck.domains.base import Domain

__all__ = [
    "RemovalCurve",
    "RemovalData",
    "STRATEGIES",
    "removal_curve",
    "removal_key",
    "removal_scale",
    "task_curves",
    "task_removal_data",
]


class _SessionRun(Run, Protocol):
    """The session a suite scores with: a run that also gives the method's outputs for a task."""

    def outputs(self, task: Any, method: Any) -> Any: ...


#: strategy → the orders it is run in
STRATEGIES = {"roar": ("morf", "lerf"), "road": ("morf", "lerf"), "goar": ("morf",)}
#: the seed of every retraining and of the noise the strategies draw, plus the run's seed (fixed within a
#: run: curves differ by data only; seed 0 keeps REMOVAL_SEED itself)
REMOVAL_SEED = 20_231
#: the removal engine's seeds from a run's or task's seed: its retraining, its removal orders' ties
RETRAINING = Stream("removal retraining", start=REMOVAL_SEED)
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


def _as_grid(run: Run, domain: Any, x: torch.Tensor) -> torch.Tensor:
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


def _retrain(run: Run, domain: Any, images: torch.Tensor, labels: torch.Tensor) -> torch.nn.Module:
    from cfcheck.models.classifiers.recipes import model_specs
    from cfcheck.models.classifiers.training import fit

    name = domain.model_roles["retrained"][0]
    spec = model_specs(domain)[name]
    epochs = run.profile.section("attribution").retrain_epochs
    # batches of 32: a few thousand inputs still give the optimiser enough steps (measured: the
    # bundled digit CNN reaches 0.97 test accuracy from 1,000 clean images in 8 epochs, 9 s on one thread)
    recipe = dataclasses.replace(
        spec.recipe,
        seed=seeded(run.seed, RETRAINING),
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


def _correct(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
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


def removal_curve(run: Run, data: RemovalData, strategy: str, order: str) -> RemovalCurve:
    """The ``strategy`` curve (``"roar"``, ``"road"`` or ``"goar"``) in ``order`` for ``data``."""
    from cfcheck.metrics.removal import noisy_linear_imputation, removal_mask
    from cfcheck.metrics.removal_curves import cumulative_errors, feature_removal, fixed_value_removal
    from cfcheck.models.generative.diffusion.projection import manifold_projection

    if strategy not in STRATEGIES or order not in STRATEGIES[strategy]:
        raise ValueError(f"unknown removal {strategy!r}/{order!r}; expected one of {STRATEGIES}")
    section = run.profile.section("attribution")
    generator = torch.Generator().manual_seed(seeded(run.seed, RETRAINING))
    shape = data.x_test.shape[1:]
    rows: list[torch.Tensor] = []
    if strategy == "road":
        explained = run.zoo(data.domain)[data.model]
        levels = (0.0, *section.removal_fractions)
        x, a = _as_grid(run, data.domain, data.x_test), _as_grid(run, data.domain, data.a_test)
        for fraction in levels:
            # ROAD breaks ties at random (its reference's fixed noise map), under the run's seed
            mask = removal_mask(a, fraction, order, tie_seed=seeded(run.seed, RETRAINING))
            imputed = noisy_linear_imputation(x, mask, generator=generator) if fraction > 0 else x
            rows.append(_correct(explained, imputed.reshape(-1, *shape), data.y_test))
        return RemovalCurve(strategy, order, levels, torch.stack(rows))
    if strategy == "roar":
        levels = (0.0, *section.removal_fractions)
        x_train, a_train = _as_grid(run, data.domain, data.x_train), _as_grid(run, data.domain, data.a_train)
        x_test, a_test = _as_grid(run, data.domain, data.x_test), _as_grid(run, data.domain, data.a_test)
        fill = x_train.mean(dim=(0, 2, 3))
        for fraction in levels:
            removed_train = fixed_value_removal(x_train, removal_mask(a_train, fraction, order), fill)
            removed_test = fixed_value_removal(x_test, removal_mask(a_test, fraction, order), fill)
            model = (
                _clean_model(run, data)
                if fraction == 0
                else _retrain(run, data.domain, removed_train.reshape(-1, *shape), data.y_train)
            )
            rows.append(_correct(model, removed_test.reshape(-1, *shape), data.y_test))
        return RemovalCurve(strategy, order, levels, torch.stack(rows))
    denoiser = _denoiser(run, data.domain)
    scale = _memo_scale(run, data)
    levels = (0.0, *section.goar_levels_for(data.domain))
    for level in levels:
        if level == 0:
            rows.append(_correct(_clean_model(run, data), data.x_test, data.y_test))
            continue
        strength = level * scale
        projected = [
            manifold_projection(feature_removal(x, a, strength), strength, denoiser, generator=generator)
            for x, a in ((data.x_train, data.a_train), (data.x_test, data.a_test))
        ]
        model = _retrain(run, data.domain, projected[0], data.y_train)
        rows.append(_correct(model, projected[1], data.y_test))
    return RemovalCurve(strategy, order, levels, cumulative_errors(torch.stack(rows)))


def _memo_scale(run: Run, data: RemovalData) -> float:
    """:func:`removal_scale` of ``data``, computed once per run (GOAR's curve and its leakage share it)."""
    return run.memo(("removal_scale", data.domain.name, data.model, len(data.x_test)), lambda: removal_scale(data))


def _clean_model(run: Run, data: RemovalData) -> torch.nn.Module:
    """The retrained model on unremoved training inputs (shared by every method of the run)."""
    key = ("removal_clean_model", data.domain.name, data.model, len(data.x_train), float(data.x_train.sum()), run.seed)
    return run.memo(key, lambda: _retrain(run, data.domain, data.x_train, data.y_train))


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


def task_removal_data(run: Run, result: Any, train: Any, *, random: bool = False) -> RemovalData:
    """The removal data of a removal task's results (``result`` its scored part, ``train`` the
    training part), with the method's attributions or, with ``random``, cfcheck's seeded random
    attribution of the same inputs."""
    for part, name in ((result, "removal_test"), (train, "removal_train")):
        if not bool(part.valid.all()):
            raise ValueError(
                f"the method abstained on {int((~part.valid).sum())} of the {name} inputs: "
                "removal benchmarks need an attribution for every input"
            )
    task = result.task
    a_train, a_test = train.saliency, result.saliency
    if random:  # the training maps first, then the scored ones, from one generator
        generator = torch.Generator().manual_seed(seeded(task.seed, RETRAINING))
        a_train = random_attribution(train.x, generator)
        a_test = random_attribution(result.x, generator)
    return RemovalData(
        task.domain,
        task.model,
        train.x,
        train.inputs.labels["label"],
        a_train,
        result.x,
        result.inputs.labels["label"],
        a_test,
    )


def task_curves(run: Run, result: Any, train: Any, strategy: str, order: str) -> tuple[RemovalCurve, RemovalCurve]:
    """The method's curve and the random attribution's for one removal task (both memoised)."""
    task = result.task
    method = run.memo(
        ("removal_curve", task, strategy, order, "method"),
        lambda: removal_curve(run, task_removal_data(run, result, train), strategy, order),
    )
    baseline = run.memo(
        ("removal_curve", task, strategy, order, "random"),
        lambda: removal_curve(run, task_removal_data(run, result, train, random=True), strategy, order),
    )
    return method, baseline


def missing_for(run: Run | None, domain: Any, strategy: str) -> str | None:
    """Why ``domain`` (the object) cannot run ``strategy`` (None: it can): ROAR and GOAR retrain the
    domain's ``retrained`` model by its recipe; GOAR also projects with an exact denoiser or a diffusion model."""
    if strategy in ("roar", "goar") and not domain.model_roles.get("retrained"):
        return (
            f"{strategy.upper()} retrains a model on removed data: domain {domain.name!r} declares no 'retrained' "
            "model with a training recipe"
        )
    from cfcheck.kinds.attribution.capabilities import ExactDenoiser

    if strategy == "goar" and not domain.model_roles.get("diffusion") and not isinstance(domain, ExactDenoiser):
        return f"GOAR projects onto the data manifold: domain {domain.name!r} has no diffusion model or exact denoiser"
    return None


def score_removal(run: _SessionRun, result: Any, method: Any, score: Any, strategy: str, order: str) -> None:
    """Records ``<strategy>_area:<order>`` and ``<strategy>_gap:<order>`` (GOAR: without the
    order) for one removal task, each curve's levels and mean heights in the record's extra."""
    __tracebackhide__ = True
    import pytest

    reason = missing_for(run, result.task.domain, strategy)
    if reason is not None:
        pytest.skip(reason)

    from cfcheck.kinds.calling import MethodOutputError
    from cfcheck.metrics.removal_curves import curve_area

    (needed,) = result.task.needs
    area_key, gap_key = removal_key(strategy, "area", order), removal_key(strategy, "gap", order)
    try:
        train = run.outputs(needed, method)
        curve, baseline = task_curves(run, result, train, strategy, order)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    except ValueError as error:
        score.unavailable(area_key, str(error))
    area, random_area = curve_area(curve.outcomes, curve.levels), curve_area(baseline.outcomes, baseline.levels)
    extra = {"curve": {"levels": list(curve.levels), "method": curve.heights, "random": baseline.heights}}
    labels = result.sample_labels
    score(area_key, area, labels=labels, extra=extra)
    score(gap_key, removal_gap(strategy, order, area, random_area), labels=labels)


def removal_gap(strategy: str, order: str, area: Any, random_area: Any) -> Any:
    """Per-input gap to the random attribution, positive = better than random: less accuracy left
    after removing the most relevant pixels, more after removing the least relevant ones, more
    inputs misclassified by GOAR."""
    return random_area - area if (strategy != "goar" and order == "morf") else area - random_area


def leakage(run: Run, data: RemovalData, strategy: str) -> torch.Tensor:
    """Per test input, 1 where a model retrained on what removal leaves *besides* the data still
    classifies it (Park et al. §4.1's class-information leakage; Rong et al.'s mask leakage):

    * ``roar``: the masks alone (1 where a pixel was removed, MoRF at the middle fraction);
    * ``goar``: x − s·a/‖a‖ without the projection, at the largest strength.

    High accuracy means the removal itself tells the retrained model the class, so the curve
    understates what was removed.
    """
    from cfcheck.metrics.removal import removal_mask
    from cfcheck.metrics.removal_curves import feature_removal

    section = run.profile.section("attribution")
    shape = data.x_test.shape[1:]
    if strategy == "roar":
        fraction = section.removal_fractions[len(section.removal_fractions) // 2]
        parts = [
            removal_mask(_as_grid(run, data.domain, a), fraction, "morf").to(data.x_train.dtype).reshape(-1, *shape)
            for a in (data.a_train, data.a_test)
        ]
    elif strategy == "goar":
        scale = _memo_scale(run, data)
        strength = section.goar_levels_for(data.domain)[-1] * scale
        parts = [feature_removal(x, a, strength) for x, a in ((data.x_train, data.a_train), (data.x_test, data.a_test))]
    else:
        raise ValueError(f"leakage is defined for 'roar' and 'goar', got {strategy!r}")
    model = _retrain(run, data.domain, parts[0], data.y_train)
    return _correct(model, parts[1], data.y_test)


def score_leakage(run: _SessionRun, result: Any, method: Any, score: Any, strategy: str) -> None:
    """Records ``<strategy>_leakage`` for one removal task (see :func:`leakage`)."""
    __tracebackhide__ = True
    import pytest

    reason = missing_for(run, result.task.domain, strategy)
    if reason is not None:
        pytest.skip(reason)

    from cfcheck.kinds.calling import MethodOutputError

    (needed,) = result.task.needs
    try:
        train = run.outputs(needed, method)
        data = task_removal_data(run, result, train)
    except MethodOutputError as error:
        pytest.fail(str(error), pytrace=False)
    except ValueError as error:
        score.unavailable(f"{strategy}_leakage", str(error))
    score(f"{strategy}_leakage", leakage(run, data, strategy), labels=result.sample_labels)
