"""Deterministic training of the reference models and the manifest that records them.

Every source of randomness is seeded from the recipe: the initial weights and dropout
(``torch.manual_seed`` inside a forked RNG, so the caller's global RNG is untouched), the data
order and the augmentation noise (their own ``torch.Generator``). Two runs of a recipe on the
same torch version and thread count therefore write byte-identical weight files.

Run ``cfcheck retrain --domain DOMAIN [--only NAME] [--smoke --out DIR]``; ``--out`` is a domain
folder, by default the bundled ``reference_models/<domain>/``. The functions here take the domain
object (:class:`cfcheck.models.capabilities.ModelDomain`), never its name.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn
from torch.nn import functional as F

from cfcheck.core.seeds import Stream, seeded

from ..builders import build_model
from ..capabilities import require_domain_object
from ..registry import save_weights
from ..shuffling import epoch_orders
from .adversarial import pgd_attack
from .architectures import calibrate_logits, count_parameters
from .evaluation import bar_violations, head_logits, main_accuracy, measure_quality, task_targets
from .recipes import ModelSpec, TrainingRecipe, domain_recipes, model_specs, smoke_spec

if TYPE_CHECKING:
    from ..capabilities import ModelDomain

__all__ = ["AUGMENTATION_DRAWS", "fit", "save_weights", "train_model", "train_reference_models"]

#: the generator of a recipe's augmentation draws (the noise of ``gaussian_noise``, the random starts
#: of ``pgd``) from the recipe's seed; the seed itself seeds the initialisation and the epoch orders
AUGMENTATION_DRAWS = Stream("augmentation draws", start=1)

Log = Callable[[str], None]


def _split_seed(domain: ModelDomain, split: str) -> int | None:
    return domain_recipes(domain).split_seed(split)


def _optimizer(recipe: TrainingRecipe, model: nn.Module) -> torch.optim.Optimizer:
    if recipe.optimizer == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    if recipe.optimizer == "sgd":
        return torch.optim.SGD(
            model.parameters(), lr=recipe.lr, momentum=0.9, nesterov=True, weight_decay=recipe.weight_decay
        )
    raise ValueError(f"optimizer must be 'adamw' or 'sgd', got {recipe.optimizer!r}")


def _lr_factor(schedule: str, total_steps: int) -> Callable[[int], float]:
    """Linear warm-up over the first ~5% of steps, then cosine decay to zero (or constant)."""
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    warmup = max(1, min(200, total_steps // 20))

    def factor(step: int) -> float:
        ramp = min(1.0, (step + 1) / warmup)
        if schedule == "constant":
            return ramp
        return ramp * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))

    return factor


def _augment(
    model: nn.Module,
    x: torch.Tensor,
    targets: dict[str, torch.Tensor],
    augmentation: dict[str, Any],
    progress: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """The recipe's input augmentation; ``progress`` counts epochs done (for eps warm-up)."""
    kind = augmentation.get("kind")
    if kind is None:
        return x
    if kind == "gaussian_noise":
        sigma = torch.rand(x.shape[0], 1, 1, 1, generator=generator) * augmentation["sigma_max"]
        noise = torch.randn(x.shape, generator=generator)
        return (x + (sigma * noise).to(x.device)).clamp(0.0, 1.0)
    if kind == "pgd":
        warmup = float(augmentation.get("eps_warmup_epochs", 0))
        eps = augmentation["eps"] * (min(1.0, progress / warmup) if warmup > 0 else 1.0)
        model.eval()  # attack the network as it will be used, then resume training
        x_adv = pgd_attack(
            model,
            x,
            targets["label"],
            eps=eps,
            steps=augmentation["steps"],
            norm=augmentation.get("norm", "l2"),
            random_start=True,
            generator=generator,
        )
        model.train()
        return x_adv
    raise ValueError(f"augmentation kind must be 'gaussian_noise' or 'pgd', got {kind!r}")


def _loss(model: nn.Module, x: torch.Tensor, targets: dict[str, torch.Tensor]) -> torch.Tensor:
    logits = head_logits(model, x)
    # a tensor, not sum()'s start 0: a task has at least one head
    return cast(torch.Tensor, sum(F.cross_entropy(logits[name], y) for name, y in targets.items()))


def fit(
    spec: ModelSpec,
    train_data: Any,
    val_data: Any | None,
    device: str | torch.device = "cpu",
    log: Log = print,
) -> nn.Module:
    """Trains ``spec``'s model on ``train_data`` following its recipe; returns it in eval mode.

    A spec with ``logit_calibration`` then has its logits standardised on the first ``n``
    images of ``train_data`` (their labels unused).
    """
    model = _fit(spec, train_data, val_data, device, log)
    if spec.logit_calibration is not None:
        n = int(spec.logit_calibration["n"])
        calibrate_logits(model, train_data.images[:n], balance=bool(spec.logit_calibration.get("balance", False)))
        log(f"[{spec.name}] logits standardised on {min(n, len(train_data))} unlabelled images")
    return model.eval()


def _fit(
    spec: ModelSpec,
    train_data: Any,
    val_data: Any | None,
    device: str | torch.device,
    log: Log,
) -> nn.Module:
    recipe = spec.recipe
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = build_model(spec.architecture, **spec.arch_kwargs).to(device)
        if recipe.epochs == 0:
            return model.eval()
        order_rng = torch.Generator().manual_seed(recipe.seed)
        augment_rng = torch.Generator().manual_seed(seeded(recipe.seed, AUGMENTATION_DRAWS))
        images = train_data.images
        targets = task_targets(spec.task, train_data, domain=spec.domain)
        n = images.shape[0]
        steps_per_epoch = math.ceil(n / recipe.batch_size)
        optimizer = _optimizer(recipe, model)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, _lr_factor(recipe.schedule, recipe.epochs * steps_per_epoch)
        )
        if val_data is not None:
            val_targets = task_targets(spec.task, val_data, domain=spec.domain)
        best_state, best_accuracy = None, -1.0
        for epoch, order in epoch_orders(n, recipe.epochs, generator=order_rng):
            model.train()
            started, total_loss = time.perf_counter(), 0.0
            for step in range(steps_per_epoch):
                index = order[step * recipe.batch_size : (step + 1) * recipe.batch_size]
                x = images[index].to(device)
                y = {name: t[index].to(device) for name, t in targets.items()}
                x = _augment(model, x, y, recipe.augmentation, epoch + step / steps_per_epoch, augment_rng)
                loss = _loss(model, x, y)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                scheduler.step()
                total_loss += loss.detach().item()
            model.eval()
            message = f"[{spec.name}] epoch {epoch + 1}/{recipe.epochs} loss {total_loss / steps_per_epoch:.4f}"
            if val_data is not None:
                accuracy = main_accuracy(model, val_data.images, val_targets)
                message += f" val_acc {accuracy:.4f}"
                if recipe.select_on == "val_accuracy" and accuracy > best_accuracy:
                    best_accuracy = accuracy
                    best_state = copy.deepcopy(model.state_dict())
            log(f"{message} ({time.perf_counter() - started:.1f}s)")
        if best_state is not None:
            model.load_state_dict(best_state)
        return model.eval()


def _num_classes(spec: ModelSpec) -> int:
    """The class count of the model's main head (a multi-head model's first head)."""
    kwargs = spec.arch_kwargs
    if "num_classes" in kwargs:
        return int(kwargs["num_classes"])
    return int(next(iter(kwargs["head_classes"].values())))


def train_model(
    spec: ModelSpec,
    out_dir: str | Path,
    domain: ModelDomain | None = None,
    device: str | torch.device = "cpu",
    log: Log = print,
) -> dict[str, Any]:
    """Trains one model, writes ``<domain name>_<name>.safetensors``; returns its manifest entry.

    Args:
        spec: the model's recipe.
        out_dir: the domain folder the weights go to.
        domain: the domain object it is trained for; default the spec's own (``spec.domain``,
            bound by ``model_specs(domain)``).
        device: the torch device it is trained on.
        log: receives progress lines.

    Returns:
        The model's manifest entry.

    Raises:
        ValueError: where no domain is given, or the spec is bound to another one.
    """
    if domain is not None:
        require_domain_object(domain, "train_model")
    if domain is None:
        domain = spec.domain
    if domain is None or (spec.domain is not None and spec.domain is not domain):
        bound = None if spec.domain is None else spec.domain.name
        given = None if domain is None else domain.name
        raise ValueError(
            f"model {spec.name!r}: give the domain it is trained for (spec.domain is "
            f"{bound!r}, domain argument {given!r}); build specs with model_specs(domain)"
        )
    if spec.domain is None:
        spec = dataclasses.replace(spec, domain=domain)
    recipe = spec.recipe
    train_data = domain.split(recipe.split, recipe.n)
    val_data = None
    if recipe.epochs > 0 and recipe.selection_split:
        val_data = domain.split(recipe.selection_split, recipe.selection_n)
    started = time.perf_counter()  # training only: rendering the splits is the domain's cost
    model = fit(spec, train_data, val_data, device=device, log=log)
    train_seconds = time.perf_counter() - started
    file_name = f"{domain.name}_{spec.name}.safetensors"
    sha256 = save_weights(
        model, Path(out_dir) / file_name, {"domain": domain.name, "name": spec.name, "architecture": spec.architecture}
    )
    # quality is measured on the domain's scored split (the methods' inputs)
    quality = measure_quality(model, spec, domain.split(domain.split_roles["scored"], spec.test_n))
    entry: dict[str, Any] = {
        "file": file_name,
        "sha256": sha256,
        "architecture": spec.architecture,
        "arch_kwargs": spec.arch_kwargs,
        "role": spec.role,
        "task": spec.task,
        "purpose": spec.purpose,
        "num_classes": _num_classes(spec),
        "parameters": count_parameters(model),
        "training": recipe.to_dict(),
        "data": {
            "split": recipe.split,
            "n": int(train_data.images.shape[0]),
            "seed": _split_seed(domain, recipe.split),
        },
        "quality": quality,
        "quality_bar": spec.quality_bar,
        "torch_version": torch.__version__,
        "trained_on": torch.device(device).type,
        "train_seconds": round(train_seconds, 1),
    }
    if spec.attribute is not None:
        entry["attribute"] = spec.attribute
    if spec.logit_calibration is not None:
        entry["logit_calibration"] = {
            **spec.logit_calibration,
            "split": recipe.split,
            "n": min(int(spec.logit_calibration["n"]), int(train_data.images.shape[0])),
            "labels_used": False,
        }
    if spec.notes:
        entry["notes"] = list(spec.notes)
    problems = bar_violations(quality, spec.quality_bar)
    status = "meets its quality bar" if not problems else "BELOW BAR: " + "; ".join(problems)
    log(f"[{spec.name}] {train_seconds:.0f}s, quality {quality} — {status}")
    return entry


def train_reference_models(
    domain: ModelDomain,
    names: Iterable[str] | None = None,
    out_dir: str | Path | None = None,
    smoke: bool = False,
    device: str | torch.device = "cpu",
    log: Log = print,
    num_threads: int | None = 1,
) -> dict[str, dict[str, Any]]:
    """Trains all (or the named) reference models of ``domain`` (the domain object); updates its
    manifest and model cards.

    ``out_dir`` is a domain folder (weights, ``manifest.json``, cards side by side); the
    default is the bundled one, ``reference_models/<domain>/``.

    Returns the new manifest entries keyed ``"<domain>/<name>"``. ``smoke`` trains each recipe
    on a tiny budget (for tests) and must write somewhere other than the bundled weights.
    ``num_threads`` (default 1, recorded per entry) makes CPU results independent of the
    machine's core count, and is faster than 2 threads on a shared, oversubscribed machine;
    ``None`` keeps torch's current setting.
    """
    specs = model_specs(domain)
    selected = list(specs) if names is None else list(names)
    unknown = [name for name in selected if name not in specs]
    if unknown:
        raise ValueError(f"unknown reference model(s) {unknown}; expected names from {sorted(specs)}")
    from ..publishing import train_into_folder

    def train_one(name: str, folder: Path) -> dict[str, Any]:
        spec = smoke_spec(specs[name]) if smoke else specs[name]
        return train_model(spec, folder, domain=domain, device=device, log=log)

    return train_into_folder(domain.name, selected, train_one, out_dir, smoke=smoke, num_threads=num_threads)
