"""The latent kind's call contract, and the one preamble every bundled latent explainer shares.

``explain(z, latent_classifier, generator, *, rng=None) -> z_cf`` (N×K×D)

The domain's decoder is passed as ``generator`` (the papers' name for it), so cfcheck's seeded
``torch.Generator`` comes as ``rng=``. :class:`LatentSpaceExplainer` checks the inputs, answers an
empty batch with an empty one (no classifier call) and hands over to the method's
:meth:`~LatentSpaceExplainer.counterfactuals`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import nn

from cfcheck.kinds.method_helpers import resolve_generator

__all__ = ["LatentSpaceExplainer", "validate_latent_inputs"]


def validate_latent_inputs(z: object, latent_classifier: object) -> None:
    """TypeError unless ``z`` is a float N×D tensor and ``latent_classifier`` is callable (the
    latent kind's ``explain`` arguments).

    Example:
        >>> validate_latent_inputs(torch.zeros(3), nn.Linear(3, 2))
        Traceback (most recent call last):
        ...
        TypeError: z must be a float N×D tensor, got Tensor (3,)
    """
    if not isinstance(z, torch.Tensor) or not z.is_floating_point() or z.ndim != 2:
        raise TypeError(
            f"z must be a float N×D tensor, got {type(z).__name__} "
            f"{tuple(z.shape) if isinstance(z, torch.Tensor) else ''}"
        )
    if not callable(latent_classifier):
        raise TypeError(f"latent_classifier must be callable, got {type(latent_classifier).__name__}")


class LatentSpaceExplainer(ABC):
    """The preamble every bundled latent explainer shares, written once.

    :meth:`explain` is the contract's call: it checks ``z`` and ``latent_classifier``
    (:func:`validate_latent_inputs`), resolves ``rng`` (a seeded fresh one for None), answers an
    empty batch with an empty N×K×D one (no classifier call) and hands over to
    :meth:`counterfactuals`, which a method implements. A method that needs more from the kind (an
    oracle's ``oracle_domain=``) names it in its own ``explain`` and passes it through :meth:`_run`.

    Attributes:
        k: counterfactuals per input (the K of an empty batch's answer); a method sets its own.

    Example:
        >>> class Twice(LatentSpaceExplainer):
        ...     k = 2
        ...     def counterfactuals(self, z, latent_classifier, generator, rng):
        ...         return z[:, None, :].repeat(1, self.k, 1)
        >>> Twice().explain(torch.zeros(3, 4), nn.Linear(4, 2), nn.Identity()).shape
        torch.Size([3, 2, 4])
    """

    k: int = 1

    def explain(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, *, rng: torch.Generator | None = None
    ) -> torch.Tensor:
        """K counterfactual latents of each row of ``z`` under ``latent_classifier``.

        Args:
            z: float N×D latents.
            latent_classifier: the classifier on the latent space (z -> logits).
            generator: the domain's decoder g(z) (for methods that measure on images).
            rng: cfcheck's seeded ``torch.Generator`` (None: a fresh one seeded ``DEFAULT_SEED``).

        Returns:
            N×K×D counterfactual latents (see :meth:`counterfactuals`).
        """
        return self._run(z, latent_classifier, generator, rng)

    def _run(
        self,
        z: torch.Tensor,
        latent_classifier: nn.Module,
        generator: nn.Module,
        rng: torch.Generator | None,
        **options: Any,
    ) -> torch.Tensor:
        """The preamble, then :meth:`counterfactuals` with ``options`` (what every ``explain`` runs)."""
        validate_latent_inputs(z, latent_classifier)
        rng = resolve_generator(rng, name="rng")
        if z.shape[0] == 0:
            return z.detach().new_zeros((0, self.k, z.shape[1]))
        return self.counterfactuals(z, latent_classifier, generator, rng, **options)

    @abstractmethod
    def counterfactuals(
        self, z: torch.Tensor, latent_classifier: nn.Module, generator: nn.Module, rng: torch.Generator
    ) -> torch.Tensor:
        """The method itself, on checked, non-empty inputs: N×K×D counterfactuals of ``z``; ``rng``
        is the caller's, or a fresh one seeded ``DEFAULT_SEED``. A subclass that does not define it
        cannot be instantiated."""
