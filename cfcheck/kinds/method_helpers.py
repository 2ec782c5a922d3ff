"""What the reference methods of several kinds share: argument checks, the seeded RNG
helpers (a method never touches the global RNG) and the lookup of an input in a domain split.

Each kind's reference methods live in its folder (``cfcheck/kinds/<kind>/methods/``), and its
own call contract, with the one preamble its bundled methods share, in that folder's
``contract`` module (``cfcheck.kinds.<kind>.methods.contract``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from cfcheck.core.seeds import BATCH_NOISE, seeded

#: Seed used when a caller passes no generator: methods stay deterministic and never
#: touch the global RNG, which the suites (and the user's own code) may rely on.
DEFAULT_SEED = 0


def validate_classifier(classifier: object, *, name: str = "classifier") -> None:
    """Raise ``TypeError`` unless ``classifier`` is an ``nn.Module``: gradient methods need
    autograd through it and the nearest-neighbour cache keys on the module object. ``name`` is
    the argument's name in the call, for the message (e.g. ``model``)."""
    if not isinstance(classifier, nn.Module):
        raise TypeError(f"Expected `{name}` to be a torch.nn.Module, but got {type(classifier).__name__}.")


def validate_images(x: object, *, name: str = "x") -> None:
    """Raise ``TypeError``/``ValueError`` unless ``x`` is a float N×C×H×W tensor with values in
    [0, 1] (the image batches image kinds take; ``name`` is the argument's, for the message)."""
    shown = f"`{name}`"
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"Expected {shown} to be a torch.Tensor, but got {type(x).__name__}.")
    if x.dim() != 4:
        raise ValueError(f"Expected {shown} to have shape N×C×H×W, but got shape {tuple(x.shape)}.")
    if not x.is_floating_point():
        raise TypeError(f"Expected {shown} to be a floating-point tensor, but got dtype {x.dtype}.")
    if x.numel() > 0 and (bool(x.min() < 0) or bool(x.max() > 1)):
        raise ValueError(f"Expected {shown} in [0, 1], but got values in [{x.min().item():.4g}, {x.max().item():.4g}].")


def resolve_generator(generator: torch.Generator | None, *, name: str = "generator") -> torch.Generator:
    """Return ``generator``, or a fresh CPU generator seeded with ``DEFAULT_SEED``.

    A fresh generator (rather than the global RNG) keeps a call without a generator
    deterministic and free of side effects on the caller's random state. ``name`` is the
    keyword the caller passed it as, for the message (e.g. ``rng``).
    """
    if generator is None:
        return torch.Generator().manual_seed(DEFAULT_SEED)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"Expected `{name}` to be a torch.Generator or None, but got {type(generator).__name__}.")
    return generator


def seeded_chunks(
    generator: torch.Generator, n: int, batch_size: int, device: torch.device
) -> list[tuple[slice, torch.Generator]]:
    """``n`` inputs in chunks of ``batch_size``, each with its own generator on ``device``.

    One seed is drawn from ``generator``; chunk ``start`` gets ``seeded(seed, BATCH_NOISE, start)``
    (``seed + start``), so a method's noise depends on the caller's seed and the chunking, never
    on the global RNG.
    """
    # drawn on the generator's own device: a CUDA generator cannot draw a CPU tensor
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
    return [
        (slice(start, start + batch_size), torch.Generator(device=device).manual_seed(seeded(seed, BATCH_NOISE, start)))
        for start in range(0, n, batch_size)
    ]


def uniform_like(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Uniform [0, 1) noise shaped like ``x`` on ``x.device``, drawn from ``generator``.

    The noise is drawn on the generator's own device and then moved, so a CPU generator
    drives a CUDA computation and the same seed gives the same numbers on every device.
    """
    noise = torch.rand(x.shape, generator=generator, device=generator.device, dtype=torch.float32)
    return noise.to(device=x.device, dtype=x.dtype)


def predict_logits(classifier: nn.Module, x: torch.Tensor, batch_size: int) -> torch.Tensor:
    """Logits of ``classifier`` on ``x`` in chunks of ``batch_size``, without autograd, on ``x``'s device."""
    from cfcheck.models.inference import batched_logits

    if x.shape[0] == 0:
        raise ValueError("Expected at least one image to classify, but got an empty batch.")
    return batched_logits(classifier, x, batch_size=batch_size).to(x.device)


def input_gradient(
    classifier: nn.Module, x: torch.Tensor, loss_fn: Callable[[torch.Tensor], torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(logits, d loss / d x)`` with autograd enabled even under ``no_grad``.

    ``torch.autograd.grad`` with the input as the only input leaves the classifier's
    parameter ``.grad`` untouched, so a classifier that was not frozen is not modified.
    """
    with torch.enable_grad():
        x_var = x.detach().requires_grad_(True)
        logits = classifier(x_var)
        loss = loss_fn(logits)
        (grad,) = torch.autograd.grad(loss, x_var)
    return logits.detach(), grad


def check_positive(name: str, value: float | int, *, integer: bool = False) -> None:
    """Raise unless a hyperparameter is a positive number (an int when ``integer``)."""
    expected = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, expected):
        kind = "an int" if integer else "a number"
        raise TypeError(f"Expected `{name}` to be {kind}, but got {type(value).__name__}.")
    if not value > 0:
        raise ValueError(f"Expected `{name}` > 0, but got {value}.")


def image_key(image: torch.Tensor) -> bytes:
    """A 16-byte digest of an image's exact pixels."""
    return hashlib.blake2b(image.detach().cpu().contiguous().numpy().tobytes(), digest_size=16).digest()


class SplitLookup:
    """Finds inputs in a domain split by their exact pixels (the controls that know the truth
    need each input's exogenous noise, which only its position in the split gives)."""

    def __init__(self, domain: Any, split: str) -> None:
        self.split = split
        self.data = domain.split(split)
        self._index = {image_key(image): i for i, image in enumerate(self.data.images)}

    def indices(self, x: torch.Tensor) -> torch.Tensor:
        """Positions of the images of ``x`` in the split; ValueError if any is not one of them."""
        keys = [image_key(image) for image in x]
        missing = sum(key not in self._index for key in keys)
        if missing:
            raise ValueError(
                f"{missing} of {len(x)} inputs are not {self.split}-split images; the true "
                "counterfactual needs each input's exogenous noise"
            )
        return torch.tensor([self._index[key] for key in keys], dtype=torch.long)
