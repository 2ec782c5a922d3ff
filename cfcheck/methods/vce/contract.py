"""The call contract every visual counterfactual explainer (VCE) here honours.

``explain(x, target, classifier, *, generator=None) -> x_cf | (x_cf, valid)``

The suites check this contract on the user's method; the reference methods check it on
their own inputs too, so a misuse fails loudly at the call site with a message that says
what was expected and what was received, instead of deep inside a forward pass.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import torch
from torch import nn

#: Seed used when a caller passes no generator: methods stay deterministic and never
#: touch the global RNG, which the suites (and the user's own code) may rely on.
DEFAULT_SEED = 0


def validate_explain_inputs(
    x: object, target: object, *, x_name: str = "x", target_name: str = "target"
) -> None:
    """Raise ``TypeError``/``ValueError`` unless ``x`` is N×C×H×W float in [0, 1] and
    ``target`` is an int64 vector of length N on the same device (the names only change
    the messages, so image banks and their labels are reported as such)."""
    xn, tn = f"`{x_name}`", f"`{target_name}`"
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"Expected {xn} to be a torch.Tensor, but got {type(x).__name__}.")
    if not isinstance(target, torch.Tensor):
        raise TypeError(f"Expected {tn} to be a torch.Tensor, but got {type(target).__name__}.")
    if x.dim() != 4:
        raise ValueError(f"Expected {xn} to have shape N×C×H×W, but got shape {tuple(x.shape)}.")
    if not x.is_floating_point():
        raise TypeError(f"Expected {xn} to be a floating-point tensor, but got dtype {x.dtype}.")
    if target.dtype != torch.int64:
        raise TypeError(f"Expected {tn} to have dtype torch.int64, but got {target.dtype}.")
    if target.dim() != 1 or target.shape[0] != x.shape[0]:
        raise ValueError(
            f"Expected {tn} to have shape ({x.shape[0]},) to match {xn}, "
            f"but got shape {tuple(target.shape)}."
        )
    if target.device != x.device:
        raise ValueError(f"Expected {tn} on the device of {xn} ({x.device}), but got {target.device}.")
    if x.numel() > 0 and (bool(x.min() < 0) or bool(x.max() > 1)):
        raise ValueError(
            f"Expected {xn} in [0, 1], but got values in [{x.min().item():.4g}, {x.max().item():.4g}]."
        )


def validate_target_range(target: torch.Tensor, num_classes: int) -> None:
    """Raise ``ValueError`` when a target is not a class index of a ``num_classes``-way model."""
    if target.numel() > 0 and (bool(target.min() < 0) or bool(target.max() >= num_classes)):
        raise ValueError(
            f"Expected every `target` in [0, {num_classes - 1}] for a classifier with "
            f"{num_classes} logits, but got values in [{target.min().item()}, {target.max().item()}]."
        )


def validate_classifier(classifier: object) -> None:
    """Raise ``TypeError`` unless ``classifier`` is an ``nn.Module``: gradient methods need
    autograd through it and the nearest-neighbour cache keys on the module object."""
    if not isinstance(classifier, nn.Module):
        raise TypeError(
            f"Expected `classifier` to be a torch.nn.Module, but got {type(classifier).__name__}."
        )


def validate_latent_inputs(z: object, latent_classifier: object) -> None:
    """TypeError unless ``z`` is a float N×D tensor and ``latent_classifier`` is callable (the
    latent kind's ``explain`` arguments)."""
    if not isinstance(z, torch.Tensor) or not z.is_floating_point() or z.ndim != 2:
        raise TypeError(f"z must be a float N×D tensor, got {type(z).__name__} "
                        f"{tuple(z.shape) if isinstance(z, torch.Tensor) else ''}")
    if not callable(latent_classifier):
        raise TypeError(f"latent_classifier must be callable, got {type(latent_classifier).__name__}")


def resolve_generator(generator: torch.Generator | None) -> torch.Generator:
    """Return ``generator``, or a fresh CPU generator seeded with ``DEFAULT_SEED``.

    A fresh generator (rather than the global RNG) keeps a call without a generator
    deterministic and free of side effects on the caller's random state.
    """
    if generator is None:
        return torch.Generator().manual_seed(DEFAULT_SEED)
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"Expected `generator` to be a torch.Generator or None, but got {type(generator).__name__}."
        )
    return generator


def seeded_chunks(generator: torch.Generator, n: int, batch_size: int, device: torch.device
                  ) -> list[tuple[slice, torch.Generator]]:
    """``n`` inputs in chunks of ``batch_size``, each with its own generator on ``device``.

    One seed is drawn from ``generator``; chunk ``start`` gets ``seed + start``, so a method's
    noise depends on the caller's seed and the chunking, never on the global RNG.
    """
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    return [(slice(start, start + batch_size), torch.Generator(device=device).manual_seed(seed + start))
            for start in range(0, n, batch_size)]


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


class VisualExplainer(ABC):
    """The preamble every bundled visual counterfactual explainer shares, written once.

    :meth:`explain` is the contract's call: it checks ``x``, ``target`` and ``classifier``, answers
    an empty batch with an empty one (no model call), resolves ``generator`` (a seeded fresh one
    for None) and hands over to :meth:`counterfactuals`, which a method implements. A method that
    abstains returns ``(x_cf, valid)`` and says so with ``returns_valid``.

    Example:
        >>> class Blank(VisualExplainer):
        ...     def counterfactuals(self, x, target, classifier, generator):
        ...         return torch.zeros_like(x)
        >>> Blank().explain(torch.rand(2, 1, 4, 4), torch.tensor([0, 1]), nn.Identity()).shape
        torch.Size([2, 1, 4, 4])
    """

    #: whether :meth:`explain` returns ``(x_cf, valid)`` rather than ``x_cf`` (a class constant, or a
    #: property where an option decides)
    returns_valid: bool = False

    def explain(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        classifier: nn.Module,
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Counterfactuals of ``x`` towards ``target`` under ``classifier`` (see :meth:`counterfactuals`)."""
        validate_explain_inputs(x, target)
        validate_classifier(classifier)
        generator = resolve_generator(generator)
        if x.shape[0] == 0:
            empty = x.detach().clone()
            return (empty, torch.zeros(0, dtype=torch.bool, device=x.device)) if self.returns_valid else empty
        return self.counterfactuals(x, target, classifier, generator)

    @abstractmethod
    def counterfactuals(self, x: torch.Tensor, target: torch.Tensor, classifier: nn.Module,
                        generator: torch.Generator) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The method itself, on checked, non-empty inputs: ``x_cf`` (``(x_cf, valid)`` where
        ``returns_valid``), shaped like ``x`` (or N×K×C×H×W for K counterfactuals per input); a
        subclass that does not define it cannot be instantiated."""
