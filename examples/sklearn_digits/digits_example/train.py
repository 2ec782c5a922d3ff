"""Train the example's explained classifier, its three oracles and its embedding network, and
add them to the domain's model store (``python -m digits_example.train``; about a minute on a CPU).

Each network is trained with a fixed seed, so a rerun writes the same weights."""

from __future__ import annotations

import argparse

import torch
from torch import nn

from cfcheck.models.store import ModelStore

from . import networks
from .domain import ROOT, make_domain

#: name → (builder, keyword arguments, training split): the explained classifier learns from
#: "train", the evaluation models from "oracle_train", so no model scores what it learned from
MODELS = {
    "cnn": ("small_cnn", {"width": 16}, "train"),
    "oracle_mlp": ("mlp", {"hidden": 128}, "oracle_train"),
    "oracle_pool_cnn": ("pool_cnn", {"width": 24}, "oracle_train"),
    "oracle_projection": ("projection_net", {"width": 32}, "oracle_train"),
    "embedding": ("embedding", {"width": 16, "dim": 32}, "oracle_train"),
}


def train(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, *, epochs: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    classify = model.classify if hasattr(model, "classify") else model
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(epochs):
        order = torch.randperm(len(labels), generator=generator)
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            optimiser.zero_grad()
            nn.functional.cross_entropy(classify(images[rows]), labels[rows]).backward()
            optimiser.step()
    return model.eval()


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    classify = model.classify if hasattr(model, "classify") else model
    with torch.no_grad():
        return float((classify(images).argmax(1) == labels).float().mean())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--only", nargs="*", default=None, help="train only these models")
    args = parser.parse_args(argv)
    domain = make_domain()
    store = ModelStore(ROOT / "models", domain.name)
    held_out = domain.split("selection")
    for seed, (name, (builder, kwargs, split)) in enumerate(MODELS.items()):
        if args.only and name not in args.only:
            continue
        data = domain.split(split)
        torch.manual_seed(seed)
        model = train(getattr(networks, builder)(**kwargs), data.images, data.labels, epochs=args.epochs, seed=seed)
        quality = accuracy(model, held_out.images, held_out.labels)
        store.add(
            name,
            model,
            builder=f"digits_example.networks:{builder}",
            arch_kwargs=kwargs,
            trained_on=split,
            quality={"selection_accuracy": round(quality, 4)},
        )
        print(f"{name}: selection accuracy {quality:.3f}")


if __name__ == "__main__":
    main()
