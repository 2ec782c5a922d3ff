"""Training and measuring the glyph models of ``recipes.py``: one AdamW/cosine loop, three losses.

``python -m cfcheck.domains.glyphs.training [--only NAME] [--smoke --out DIR]`` trains into the
bundled ``reference_models/glyphs/`` (or ``DIR``) through :func:`cfcheck.models.publishing.train_into_folder`,
which writes the manifest and the model cards after every model.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from cfcheck.core.retrain import RetrainRequest, add_retrain_arguments, retrain_request
from cfcheck.core.seeds import Stream, seeded
from cfcheck.core.thresholds import bar_violations, parse_bars
from cfcheck.models.builders import build_model
from cfcheck.models.inference import batched_apply
from cfcheck.models.model_cards import write_model_cards
from cfcheck.models.publishing import train_into_folder
from cfcheck.models.registry import MANIFEST_NAME, domain_dir, load_manifest, load_model, save_weights, update_manifest
from cfcheck.models.shuffling import epoch_orders

from . import networks  # noqa: F401  (registers the glyph architectures)
from .fonts import NUM_CHARACTERS, NUM_FONTS
from .latent import CONTINUOUS_SLICE, raw_latents
from .networks import CANONICAL_FRACTION, ENCODER_HEADS, GlyphEncoder, GlyphGenerator
from .recipes import GlyphRecipe, glyph_recipes
from .rendering import render, render_coverage
from .sampling import SCENARIOS, GlyphFactors
from .splits import SPLIT_SIZES, load_split, standardiser

DOMAIN = "glyphs"

# the glyph models' streams from their recipe's seed (the seed itself seeds the initialisation)
#: the one generator of a glyph model's epoch orders (:func:`~cfcheck.models.shuffling.epoch_orders`)
TRAINING_ORDER = Stream("glyph training epoch order", start=1)
#: the one generator of the generator's canonical pre-training batches
CANONICAL_ORDER = Stream("glyph generator canonical pre-training order", start=2)


def _optimise(
    model: nn.Module, recipe: GlyphRecipe, n: int, loss_of_batch: Callable[[torch.Tensor], torch.Tensor]
) -> float:
    """AdamW with a per-step cosine schedule over ``recipe.epochs`` seeded shuffles of ``n``
    examples; ``loss_of_batch(index)`` returns the loss of the examples at ``index``. Returns
    the mean loss of the last epoch."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    steps_per_epoch = math.ceil(n / recipe.batch_size)
    total = steps_per_epoch * recipe.epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 0.5 * (1 + math.cos(math.pi * step / total)))
    order_rng = torch.Generator().manual_seed(seeded(recipe.seed, TRAINING_ORDER))
    model.train()
    last = float("nan")
    for _, order in epoch_orders(n, recipe.epochs, generator=order_rng):
        running = 0.0
        for start in range(0, n, recipe.batch_size):
            loss = loss_of_batch(order[start : start + recipe.batch_size])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            running += float(loss.detach()) * min(recipe.batch_size, n - start)
        last = running / n
    model.eval()
    return last


def canonical_renders() -> tuple[torch.Tensor, torch.Tensor]:
    """Raw latents (1056×11) and coverage (1056×1×32×32) of every (font, character) pair drawn
    upright, centred, longer side ``CANONICAL_FRACTION`` of the canvas: the generator's canonical frame."""
    font, character = torch.meshgrid(torch.arange(NUM_FONTS), torch.arange(NUM_CHARACTERS), indexing="ij")
    n = font.numel()
    zeros = torch.zeros(n)
    factors = GlyphFactors(
        character=character.flatten(),
        font=font.flatten(),
        label=character.flatten() % 2,
        inverse=zeros,
        rotation=zeros,
        scale=torch.full((n,), CANONICAL_FRACTION),
        shift_x=zeros,
        shift_y=zeros,
    )
    return raw_latents(factors), render_coverage(factors)


def _pretrain_canonical(model: GlyphGenerator, recipe: GlyphRecipe) -> None:
    """``recipe.canonical_steps`` AdamW steps (cosine) of L1 between the generator's canonical
    coverage and the canonical renders, batches drawn by seeded permutations."""
    latents, coverage = canonical_renders()
    optimiser = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    total = recipe.canonical_steps
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 0.5 * (1 + math.cos(math.pi * step / total)))
    rng = torch.Generator().manual_seed(seeded(recipe.seed, CANONICAL_ORDER))
    # a new order when the current one has no full batch left: at most one per step
    orders = (order for _, order in epoch_orders(len(latents), total + 1, generator=rng))
    order = next(orders)
    position = 0
    model.train()
    for _ in range(total):
        if position + recipe.batch_size > len(order):
            order, position = next(orders), 0
        index = order[position : position + recipe.batch_size]
        position += recipe.batch_size
        loss = (model.canonical(latents[index]) - coverage[index]).abs().mean()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()


def _raw_affine(recipe: GlyphRecipe) -> dict[str, list[float]]:
    fitted = standardiser(recipe.scenario)
    return {"latent_mean": fitted.mean.tolist(), "latent_std": fitted.std.tolist()}


# -- quality ---------------------------------------------------------------------------------------
def encoder_quality(encoder: nn.Module, data: Any, scenario: str) -> dict[str, float]:
    """Character and font accuracy, and the continuous attributes' MAE in standardised units."""
    out = batched_apply(encoder, data.images)
    character, font, continuous = torch.split(out, list(ENCODER_HEADS.values()), dim=1)
    raw = raw_latents(data.factors)[:, CONTINUOUS_SLICE]
    std = standardiser(scenario).std[CONTINUOUS_SLICE]
    return {
        "character_accuracy": float((character.argmax(1) == data.factors.character).double().mean()),
        "font_accuracy": float((font.argmax(1) == data.factors.font).double().mean()),
        "continuous_mae": float(((continuous - raw).abs() / std).mean()),
    }


def generator_quality(generator: nn.Module, data: Any, encoder: nn.Module | None) -> dict[str, float]:
    """L1 between g(z) and the rendered image of z; the encoder's character accuracy on both."""
    fake = batched_apply(generator, raw_latents(data.factors))
    quality = {"test_l1": float((fake - data.images).abs().mean())}
    if encoder is not None:
        for suffix, images in (("", fake), ("_real", data.images)):
            logits = batched_apply(encoder, images)[:, : ENCODER_HEADS["character"]]
            quality[f"encoder_character_accuracy{suffix}"] = float(
                (logits.argmax(1) == data.factors.character).double().mean()
            )
    return quality


def refont(factors: GlyphFactors, fonts: torch.Tensor) -> GlyphFactors:
    """The same factors with ``fonts`` instead of their own."""
    fields = {name: getattr(factors, name) for name in factors.__dataclass_fields__}
    return GlyphFactors(**{**fields, "font": fonts.to(torch.int64)})


def font_swap_fonts(factors: GlyphFactors, scenario: str, *, spurious: bool, seed: int) -> torch.Tensor:
    """A font per sample: from the spurious group of the *other* label (``spurious=True``) or,
    for the reference, uniformly from the non-spurious fonts (seeded)."""
    groups = SCENARIOS[scenario].spurious_fonts
    rng = torch.Generator().manual_seed(seed)
    n = len(factors)
    if spurious:
        table = torch.tensor(groups, dtype=torch.int64)
        return table[1 - factors.label, torch.randint(0, table.shape[1], (n,), generator=rng)]
    others = torch.tensor(SCENARIOS[scenario].neutral_fonts, dtype=torch.int64)
    return others[torch.randint(0, len(others), (n,), generator=rng)]


def classifier_quality(classifier: nn.Module, data: Any, scenario: str) -> dict[str, float]:
    """Accuracy against the true parity and the observed labels; how often predictions flip
    when the font is swapped for one of the other label's spurious group, or a neutral one."""
    predicted = batched_apply(classifier, data.images).argmax(1)
    quality = {
        "causal_accuracy": float((predicted == data.factors.parity).double().mean()),
        "label_accuracy": float((predicted == data.labels).double().mean()),
    }
    for key, spurious in (("spurious_flip_rate", True), ("neutral_flip_rate", False)):
        fonts = font_swap_fonts(data.factors, scenario, spurious=spurious, seed=7)
        swapped = batched_apply(classifier, render(refont(data.factors, fonts))).argmax(1)
        quality[key] = float((swapped != predicted).double().mean())
    # how much more often the other label's spurious fonts flip a prediction than a neutral font does
    quality["spurious_reliance"] = quality["spurious_flip_rate"] - quality["neutral_flip_rate"]
    quality["test_n"] = float(len(data))
    return quality


# -- one model -------------------------------------------------------------------------------------
def _train_network(recipe: GlyphRecipe, folder: Path) -> tuple[nn.Module, dict[str, float]]:
    data = load_split(recipe.scenario, recipe.split, recipe.n)
    test = load_split(recipe.scenario, "test", recipe.test_n)
    kwargs = dict(recipe.arch_kwargs)
    if recipe.kind != "classifier":
        kwargs.update(_raw_affine(recipe))
    torch.manual_seed(recipe.seed)
    model = build_model(recipe.architecture, **kwargs)
    n = len(data)
    if recipe.kind == "classifier":

        def loss(index: torch.Tensor) -> torch.Tensor:
            return F.cross_entropy(model(data.images[index]), data.labels[index])
    elif recipe.kind == "encoder":
        raw_continuous = raw_latents(data.factors)[:, CONTINUOUS_SLICE]
        std = standardiser(recipe.scenario).std[CONTINUOUS_SLICE]

        def loss(index: torch.Tensor) -> torch.Tensor:
            heads = cast(GlyphEncoder, model).heads(data.images[index])  # an encoder recipe builds a glyph_encoder
            return (
                F.cross_entropy(heads["character"], data.factors.character[index])
                + F.cross_entropy(heads["font"], data.factors.font[index])
                + ((heads["continuous"] - raw_continuous[index]).abs() / std).mean()
            )
    else:
        latents = raw_latents(data.factors)

        def loss(index: torch.Tensor) -> torch.Tensor:
            return (model(latents[index]) - data.images[index]).abs().mean()

    started = time.perf_counter()
    if recipe.canonical_steps:
        _pretrain_canonical(cast(GlyphGenerator, model), recipe)  # only the generator recipe sets canonical_steps
    final_loss = _optimise(model, recipe, n, loss)
    seconds = time.perf_counter() - started
    if recipe.kind == "classifier":
        quality = classifier_quality(model, test, recipe.scenario)
    elif recipe.kind == "encoder":
        quality = encoder_quality(model, test, recipe.scenario)
    else:
        encoder = _sibling_encoder(folder)
        quality = generator_quality(model, test, encoder)
    quality["final_train_loss"] = final_loss
    quality["train_seconds"] = round(seconds, 1)
    return model, quality


def _sibling_encoder(folder: Path) -> nn.Module | None:
    """The encoder trained into the same folder (None when there is none yet)."""
    try:
        return load_model("encoder", domain=DOMAIN, weights_dir=folder)
    except Exception:  # noqa: BLE001 - a missing or stale encoder only drops the recovery metric
        return None


def train_glyph_model(recipe: GlyphRecipe, folder: Path, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Trains ``recipe`` into ``folder``; returns its manifest entry."""
    parse_bars(recipe.quality_bar)
    model, quality = _train_network(recipe, folder)
    seconds = quality.pop("train_seconds")
    file_name = f"{DOMAIN}_{recipe.name}.safetensors"
    sha256 = save_weights(
        model, folder / file_name, {"domain": DOMAIN, "name": recipe.name, "architecture": recipe.architecture}
    )
    problems = bar_violations(quality, recipe.quality_bar)
    log(
        f"[{recipe.name}] {seconds:.0f}s, quality {quality} — "
        + ("meets its quality bar" if not problems else "BELOW BAR: " + "; ".join(problems))
    )
    kwargs = dict(recipe.arch_kwargs)
    if recipe.kind != "classifier":
        kwargs.update(_raw_affine(recipe))
    entry = {
        "file": file_name,
        "sha256": sha256,
        "architecture": recipe.architecture,
        "arch_kwargs": kwargs,
        "role": recipe.role,
        "purpose": recipe.purpose,
        "interface": recipe.interface,
        "notes": list(recipe.notes),
        "training": recipe.training(),
        "data": {
            "split": recipe.split,
            "n": recipe.n if recipe.n is not None else SPLIT_SIZES[recipe.split],
            "scenario": recipe.scenario,
        },
        "quality": quality,
        "quality_bar": recipe.quality_bar,
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch_version": torch.__version__,
        "trained_on": "cpu",
        "train_seconds": seconds,
    }
    if recipe.kind == "classifier":
        entry["num_classes"] = 2
        entry["scenario"] = recipe.scenario
    return entry


def train_glyph_models(
    names: Sequence[str] | None = None,
    out_dir: str | Path | None = None,
    *,
    smoke: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, Any]]:
    """Trains the glyph models (all, or ``names``) into ``out_dir`` (default: the bundled folder)."""
    recipes = glyph_recipes()
    selected = list(recipes) if names is None else list(names)
    unknown = [name for name in selected if name not in recipes]
    if unknown:
        raise ValueError(f"unknown glyph model(s) {unknown}; expected names from {list(recipes)}")

    def train_one(name: str, folder: Path) -> dict[str, Any]:
        recipe = recipes[name].smoke() if smoke else recipes[name]
        return train_glyph_model(recipe, folder, log)

    return train_into_folder(DOMAIN, selected, train_one, out_dir, smoke=smoke, num_threads=1)


def retrain_glyph_models(request: RetrainRequest) -> dict[str, dict[str, Any]]:
    """The glyph domain's recipe function (``cfcheck retrain --domain glyphs``): trains the glyph
    models of ``request`` on the CPU, one thread."""
    if request.device != "cpu" or request.threads != 1:
        raise ValueError(
            f"the glyph recipes train on the CPU with one thread (got --device {request.device}, "
            f"--threads {request.threads})"
        )
    return train_glyph_models(request.only, request.out, smoke=request.smoke, log=request.log)


def refresh_bars_and_cards(out_dir: str | Path | None = None) -> list[str]:
    """Copies every recipe's current quality bar (and notes) into the manifest entries and rewrites
    the cards, without retraining: bars are set from measured values after a training run, and
    they do not change the weights. Returns the names of the entries refreshed."""
    folder = Path(out_dir) if out_dir is not None else domain_dir(DOMAIN)
    manifest = load_manifest(folder / MANIFEST_NAME)
    recipes = glyph_recipes()
    refreshed = {}
    for key, entry in manifest["models"].items():
        name = key.split("/", 1)[1]
        if key.startswith(f"{DOMAIN}/") and name in recipes:
            refreshed[key] = {**entry, "quality_bar": recipes[name].quality_bar, "notes": list(recipes[name].notes)}
    manifest = update_manifest(folder, refreshed)
    write_model_cards({"models": {k: manifest["models"][k] for k in refreshed}}, folder)
    return sorted(k.split("/", 1)[1] for k in refreshed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_retrain_arguments(parser, domain=None)
    parser.add_argument(
        "--refresh-bars",
        action="store_true",
        help="copy the recipes' quality bars and notes into the manifest and cards; no training",
    )
    args = parser.parse_args(argv)
    if args.refresh_bars:
        print("refreshed:", ", ".join(refresh_bars_and_cards(args.out)))
        return 0
    retrain_glyph_models(retrain_request(args, DOMAIN))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
