"""Train the example's models and add them to the domain's model store
(``python -m digits_scm_example.train``; about half a minute on one CPU core).

The anti-causal predictors, the embedding and the minimality VAE learn from the ``oracle_train``
split; the SCM generator's conditional VAE from ``train``, so nothing that scores the generator
learned from what it learned from. Each network is trained with a fixed seed on one thread, so a
rerun writes the same weights."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from torch import nn

from cfcheck.models.store import ModelStore

from . import networks
from .domain import NAME, ROOT, make_domain

#: name → (builder, keyword arguments, training split, what its store entry says it reads)
MODELS: dict[str, tuple[str, dict[str, int], str, dict[str, object]]] = {
    "predictor_digit": ("digit_predictor", {"width": 16}, "oracle_train", {"attribute": "digit"}),
    "predictor_measures": ("measure_predictor", {"width": 16}, "oracle_train", {"attributes": ["width", "ink"]}),
    "embedding": ("embedding", {"width": 16, "dim": 32}, "oracle_train", {}),
    "vae": ("vae", {"latent": 6}, "oracle_train", {}),
    "cvae": ("conditional_vae", {"latent": 4, "hidden": 256}, "train", {}),
}


def _loop(
    model: nn.Module, n: int, loss: Callable[[torch.Tensor, torch.Generator], torch.Tensor], epochs: int, seed: int
) -> nn.Module:
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, 32):
            optimiser.zero_grad()
            loss(order[start : start + 32], generator).backward()
            optimiser.step()
    return model.eval()


def _elbo(
    x: torch.Tensor,
    mean: torch.Tensor,
    log_var: torch.Tensor,
    decode: Callable[[torch.Tensor], torch.Tensor],
    generator: torch.Generator,
) -> torch.Tensor:
    z = mean + torch.randn(mean.shape, generator=generator) * (0.5 * log_var).exp()
    nll = nn.functional.binary_cross_entropy(decode(z), x, reduction="sum")
    kl = -0.5 * (1 + log_var - mean**2 - log_var.exp()).sum()
    return (nll + kl) / len(x)


def fit(
    name: str, model: nn.Module, images: torch.Tensor, parents: dict[str, torch.Tensor], epochs: int, seed: int
) -> nn.Module:
    """Train ``model`` (``name``'s recipe) on ``images`` and their attributes."""
    n = len(images)
    if name == "predictor_digit":
        return _loop(
            model, n, lambda r, g: nn.functional.cross_entropy(model(images[r]), parents["digit"][r]), epochs, seed
        )
    if name == "predictor_measures":
        target = torch.stack([(parents[a] - m) / s for a, (m, s) in networks.SCALES.items()], 1)
        return _loop(
            model, n, lambda r, g: nn.functional.mse_loss(model.standardised(images[r]), target[r]), epochs, seed
        )
    if name == "embedding":
        return _loop(
            model,
            n,
            lambda r, g: nn.functional.cross_entropy(model.classify(images[r]), parents["digit"][r]),
            epochs,
            seed,
        )
    if name == "vae":
        return _loop(model, n, lambda r, g: _elbo(images[r], *model.encode(images[r]), model.decode, g), epochs, seed)
    condition = networks.condition(parents)
    return _loop(
        model,
        n,
        lambda r, g: _elbo(
            images[r], *model.encode(images[r], condition[r]), lambda z: model.decode(z, condition[r]), g
        ),
        epochs,
        seed,
    )


@torch.no_grad()
def quality(name: str, model: nn.Module, images: torch.Tensor, parents: dict[str, torch.Tensor]) -> dict[str, float]:
    """What the model achieves on held-out images (the selection and scored splits)."""
    if name == "predictor_digit":
        return {"accuracy": float((model(images).argmax(1) == parents["digit"]).float().mean())}
    if name == "predictor_measures":
        out = model(images)
        return {f"{a}_error_in_sd": float((out[a] - parents[a]).abs().mean() / parents[a].std()) for a in out}
    if name == "embedding":
        return {"accuracy": float((model.classify(images).argmax(1) == parents["digit"]).float().mean())}
    recon = (
        model(images)
        if name == "vae"
        else model.decode(model.encode(images, networks.condition(parents))[0], networks.condition(parents))
    )
    return {"reconstruction_l1": float((recon - images).abs().mean())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--only", nargs="*", default=None, help="train only these models")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    domain = make_domain()
    store = ModelStore(ROOT / "models", NAME)
    held = [domain.split(s) for s in ("selection", "scored")]
    held_images = torch.cat([s.images for s in held])
    held_parents = {
        a: torch.cat([domain.parents(s, torch.arange(len(domain.split(s))))[a] for s in ("selection", "scored")])
        for a in ("digit", "width", "ink")
    }
    for seed, (name, (builder, kwargs, split, reads)) in enumerate(MODELS.items()):
        if args.only and name not in args.only:
            continue
        data = domain.split(split)
        parents = domain.parents(split, torch.arange(len(data)))
        torch.manual_seed(seed)
        model = fit(name, getattr(networks, builder)(**kwargs), data.images, parents, args.epochs, seed)
        measured = {k: round(v, 4) for k, v in quality(name, model, held_images, held_parents).items()}
        store.add(
            name,
            model,
            builder=f"digits_scm_example.networks:{builder}",
            arch_kwargs=kwargs,
            trained_on=split,
            quality=measured,
            **reads,
        )
        print(f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in measured.items()))


if __name__ == "__main__":
    main()
