"""Counterfactual fine-tuning of a conditional (hierarchical) VAE (de Sousa Ribeiro et al. 2023's
"counterfactual training", which Melistas et al. 2024 use when an HVAE ignores its condition, §4.2).

An HVAE trained on the ELBO alone can reconstruct every image from its latents and ignore the parents
(its spatial latents hold the shape), so a do() changes nothing. The fine-tuning adds a counterfactual
term: for each training image, the parents of another image of the batch (c*), the counterfactual mean
μ(z, c*) at the posterior means z, and the loss of an auxiliary predictor of c on it. The auxiliary
predictor is the generator's own, trained first on the same training images (never an evaluation
model): it regresses the standardised leading columns of c and classifies the one-hot block after
them. Melistas et al. weight the two terms with a Lagrange multiplier; here the weight is fixed.

Which counterfactual the term scores matters. With ``abduct_pixel_noise`` it is the one the bundled
adapter returns by default, x* = μ(z, c*) + σ(z, c*)·(x − μ(z, c)) / σ(z, c): the abducted residual
still carries strokes of the factual digit, so a model fine-tuned on μ(z, c*) alone (the first
bundled HVAE) was scored 0.66 do(digit) accuracy with the noise and about 0.8 without it. Scoring
the counterfactual that is actually returned lets the fine-tuning learn to make the residual and
σ(z, c*) agree with the new parents too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.core.seeds import TRAINING_NOISE, Stream, seeded

from ..base import epoch_batches

__all__ = [
    "COUNTERFACTUAL_ORDER",
    "COUNTERFACTUAL_PARTNERS",
    "PREDICTOR_BLENDS",
    "ConditionPredictor",
    "FitTerm",
    "condition_loss",
    "counterfactual_finetune",
    "elbo_fit",
    "standardised_condition",
    "train_condition_predictor",
]

# the fine-tuning's own streams from its ``seed`` (the seed itself seeds the auxiliary predictor's
# initialisation and its epochs' orders; the fit term's generator is TRAINING_NOISE's)
#: the auxiliary predictor's mixup partners and blend weights (:func:`train_condition_predictor`)
PREDICTOR_BLENDS = Stream("auxiliary predictor mixup blends", start=7)
#: the partner whose parents c* each fine-tuning image is given, a permutation of its batch per step
COUNTERFACTUAL_PARTNERS = Stream("counterfactual-training partners", start=2)
#: the seed whose epoch orders (:func:`~cfcheck.models.shuffling.epoch_batches`, under
#: :data:`~cfcheck.core.seeds.EPOCH_ORDER`) the fine-tuning steps through
COUNTERFACTUAL_ORDER = Stream("counterfactual fine-tuning epoch order", start=3)


class ConditionPredictor(nn.Module):
    """A small CNN predicting a condition vector: ``continuous`` regressed columns, then a ``classes``-way
    one-hot block."""

    def __init__(self, continuous: int, classes: int, channels: int = 1) -> None:
        super().__init__()
        self.continuous, self.classes = continuous, classes
        self.net = nn.Sequential(
            nn.Conv2d(channels, 32, 3, 2, 1),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, 2, 1),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, 2, 1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 16, 128),
            nn.ReLU(),
            nn.Linear(128, continuous + classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def condition_loss(
    predicted: torch.Tensor, standardised: torch.Tensor, continuous: int, *, soft: bool = False
) -> torch.Tensor:
    """Mean squared error on the ``continuous`` standardised columns plus the cross-entropy of the one-hot block
    (with ``soft``, against the block as class probabilities: for mixed targets)."""
    regression = F.mse_loss(predicted[:, :continuous], standardised[:, :continuous])
    classes = standardised[:, continuous:] if soft else standardised[:, continuous:].argmax(1)
    return regression + F.cross_entropy(predicted[:, continuous:], classes)


def train_condition_predictor(
    images: torch.Tensor,
    standardised: torch.Tensor,
    continuous: int,
    *,
    seed: int,
    epochs: int,
    batch_size: int = 128,
    lr: float = 1e-3,
    mixup: bool = False,
) -> ConditionPredictor:
    """Trains the auxiliary predictor of the standardised condition on the training images (Adam).

    With ``mixup`` each batch is also seen blended with a shuffled copy of itself, x = λx₁ + (1 − λ)x₂ with
    targets mixed alike, λ ~ U(0, 1) per row (Zhang et al. 2018). A predictor trained on clean digits
    alone reads a counterfactual that still shows strokes of the factual digit confidently as the new one,
    so the counterfactual term stops pushing while an independent reader still sees the old digit; the
    mixup-trained predictor lowers its confidence in proportion to what is left of another digit.
    """
    torch.manual_seed(seed)
    predictor = ConditionPredictor(continuous, standardised.shape[1] - continuous, images.shape[1])
    optimiser = torch.optim.Adam(predictor.parameters(), lr=lr)
    blends = torch.Generator().manual_seed(seeded(seed, PREDICTOR_BLENDS))
    for rows in epoch_batches(images.shape[0], batch_size, seed, epochs):
        loss = condition_loss(predictor(images[rows]), standardised[rows], continuous)
        if mixup:
            other = rows[torch.randperm(len(rows), generator=blends)]
            weight = torch.rand(len(rows), 1, generator=blends)
            mixed_x = weight[:, :, None, None] * images[rows] + (1 - weight[:, :, None, None]) * images[other]
            mixed_y = weight * standardised[rows] + (1 - weight) * standardised[other]
            loss = loss + condition_loss(predictor(mixed_x), mixed_y, continuous, soft=True)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
    return predictor.eval().requires_grad_(False)


def standardised_condition(model: Any, condition: torch.Tensor, chunk: int = 4096) -> torch.Tensor:
    """``condition`` as ``model`` standardises it (its ``_standardise``), computed in chunks without gradients."""
    if condition.ndim != 2 or chunk < 1:
        raise ValueError(f"condition must be N×k and chunk >= 1, got {tuple(condition.shape)} and {chunk}")
    with torch.no_grad():
        return torch.cat(
            [
                model._standardise(condition[i : i + chunk], len(condition[i : i + chunk]))
                for i in range(0, len(condition), chunk)
            ]
        )


#: ``(model, x, c, generator) -> (objective, logged value)``: the fit term of the counterfactual fine-tuning
FitTerm = Callable[[Any, torch.Tensor, torch.Tensor, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def elbo_fit(
    model: Any, x: torch.Tensor, c: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A conditional VAE's fit term: the negative ELBO per pixel (and its reconstruction NLL, logged)."""
    loss, nll, _ = (v.mean() for v in model.negative_elbo(x, c, generator=generator))
    return loss / x[0].numel(), nll


def counterfactual_finetune(
    model: Any,
    images: torch.Tensor,
    condition: torch.Tensor,
    *,
    seed: int,
    epochs: int,
    batch_size: int,
    lr: float,
    weight: float,
    predictor_epochs: int,
    abduct_pixel_noise: bool = False,
    predictor_mixup: bool = False,
    fit: FitTerm = elbo_fit,
    parameters: list[nn.Parameter] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, float]:
    """Fine-tunes ``model`` in place on the fit term (default: negative ELBO per pixel) + ``weight`` × the
    counterfactual loss.

    Args:
        model: a conditional generator with ``counterfactual(x, c, c*, abduct_pixel_noise=…)``,
            ``standardised_columns`` and ``_standardise`` (and ``negative_elbo`` for the default ``fit``).
        images, condition: the training data.
        seed: seeds the predictor, the data order, the partner draws and the latent samples.
        epochs: fine-tuning passes.
        batch_size, lr: of the fine-tuning (AdamW, β = (0.9, 0.9), weight decay 0.01, as the ELBO phase).
        weight: the counterfactual term's weight.
        predictor_epochs: the auxiliary predictor's training passes.
        abduct_pixel_noise: score the counterfactual with the abducted pixel noise (what the adapter
            returns by default) instead of the mean μ(z, c*) (module docstring).
        predictor_mixup: train the auxiliary predictor with mixup (:func:`train_condition_predictor`).
        fit: the fit term and the value logged with it (:data:`FitTerm`; default :func:`elbo_fit`).
        parameters: the parameters optimised (default: all of ``model``'s).
        log: receives progress lines.

    Returns:
        ``{"cf_loss", "cf_nll"}`` (the counterfactual loss and the fit term's logged value) averaged over the
        last 100 steps, and the predictor's loss on the factual images of the last batch (``predictor_loss``).
    """
    if epochs < 1 or predictor_epochs < 1 or batch_size < 1 or lr <= 0 or weight < 0:
        raise ValueError(
            f"need epochs >= 1, predictor_epochs >= 1, batch_size >= 1, lr > 0 and weight >= 0; got "
            f"{epochs}, {predictor_epochs}, {batch_size}, {lr} and {weight}"
        )
    continuous = model.standardised_columns
    standardised = standardised_condition(model, condition)
    started = time.perf_counter()
    predictor = train_condition_predictor(
        images, standardised, continuous, seed=seed, epochs=predictor_epochs, mixup=predictor_mixup
    )
    log(f"auxiliary predictor: {predictor_epochs} epoch(s) in {time.perf_counter() - started:.0f} s")
    optimised = list(model.parameters()) if parameters is None else list(parameters)
    optimiser = torch.optim.AdamW(optimised, lr=lr, betas=(0.9, 0.9), weight_decay=0.01)
    generator = torch.Generator().manual_seed(seeded(seed, TRAINING_NOISE))
    partners = torch.Generator().manual_seed(seeded(seed, COUNTERFACTUAL_PARTNERS))
    history: list[tuple[float, float]] = []
    started, step = time.perf_counter(), 0
    model.train()
    for rows in epoch_batches(images.shape[0], batch_size, seeded(seed, COUNTERFACTUAL_ORDER), epochs):
        x, c = images[rows], condition[rows]
        c_star = c[torch.randperm(len(rows), generator=partners)]
        objective, nll = fit(model, x, c, generator)
        counterfactual = model.counterfactual(x, c, c_star, abduct_pixel_noise=abduct_pixel_noise)
        cf = condition_loss(predictor(counterfactual), model._standardise(c_star, len(rows)), continuous)
        optimiser.zero_grad(set_to_none=True)
        (objective + weight * cf).backward()
        torch.nn.utils.clip_grad_norm_(optimised, 350.0)
        optimiser.step()
        history, step = (history + [(cf.item(), nll.item())])[-100:], step + 1
        if step % 50 == 0:
            log(
                f"counterfactual step {step} cf {sum(h[0] for h in history) / len(history):.3f} "
                f"({(time.perf_counter() - started) / step:.2f} s/step)"
            )
    model.eval()
    with torch.no_grad():
        factual = float(condition_loss(predictor(images[rows]), standardised[rows], continuous))
    count = max(1, len(history))
    return {
        "cf_loss": sum(h[0] for h in history) / count,
        "cf_nll": sum(h[1] for h in history) / count,
        "predictor_loss": factual,
    }
