"""The call contract every bundled SCM counterfactual generator honours, and its one preamble.

``counterfactual(x, parents, intervention[, *, generator=None]) -> x_cf``

:class:`SCMGenerator` checks the inputs, answers an empty batch with an empty one (no model
call) and hands over to the method's :meth:`~SCMGenerator.counterfactuals`; a method that draws
random numbers derives from :class:`StochasticSCMGenerator`, whose call also takes cfcheck's
seeded ``generator=`` (the suites pass one only to a call that names it, so a deterministic
method's signature says it needs none). A misuse fails at the call site with a message that says
what was expected and what was received, instead of deep inside a mechanism.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import cast

import torch

from cfcheck.kinds.method_helpers import resolve_generator, validate_images

__all__ = ["SCMGenerator", "StochasticSCMGenerator", "validate_scm_inputs"]


def validate_scm_inputs(x: object, parents: object, intervention: object) -> None:
    """Raise ``TypeError``/``ValueError`` unless ``x`` is a float N×C×H×W tensor in [0, 1] and
    ``parents`` and ``intervention`` are dicts of N-tensors by parent name.

    Example:
        >>> validate_scm_inputs(torch.zeros(2, 1, 4, 4), {"a": torch.zeros(2)}, {"a": torch.ones(3)})
        Traceback (most recent call last):
        ...
        ValueError: Expected `intervention['a']` to be an N-tensor of shape (2,) to match `x`, but got shape (3,).
    """
    validate_images(x)
    n = cast(torch.Tensor, x).shape[0]
    for argument, values in (("parents", parents), ("intervention", intervention)):
        if not isinstance(values, dict):
            raise TypeError(
                f"Expected `{argument}` to be a dict of N-tensors by name, but got {type(values).__name__}."
            )
        for name, value in values.items():
            shown = f"`{argument}[{name!r}]`"
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"Expected {shown} to be an N-tensor, but got {type(value).__name__}.")
            if value.shape != (n,):
                raise ValueError(
                    f"Expected {shown} to be an N-tensor of shape ({n},) to match `x`, but got shape {tuple(value.shape)}."
                )


class SCMGenerator(ABC):
    """The preamble every bundled SCM counterfactual generator shares, written once.

    :meth:`counterfactual` is the contract's call: it checks ``x``, ``parents`` and
    ``intervention`` (:func:`validate_scm_inputs`), answers an empty batch with an empty one (no
    model call) and hands over to :meth:`counterfactuals`, which a method implements. Its call
    takes no ``generator``: a deterministic method's hook gets a seeded one it may ignore. A method
    that draws random numbers derives from :class:`StochasticSCMGenerator` instead.

    Example:
        >>> class Unchanged(SCMGenerator):
        ...     def counterfactuals(self, x, parents, intervention, generator):
        ...         return x.clone()
        >>> x = torch.rand(2, 1, 4, 4)
        >>> Unchanged().counterfactual(x, {"a": torch.zeros(2)}, {"a": torch.ones(2)}).shape
        torch.Size([2, 1, 4, 4])
    """

    def counterfactual(
        self, x: torch.Tensor, parents: dict[str, torch.Tensor], intervention: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """The counterfactual of each image of ``x`` under ``intervention`` (see :meth:`counterfactuals`).

        Args:
            x: the observed images, float N×C×H×W in [0, 1].
            parents: the observed parents, N-tensors by name.
            intervention: one or more parents with N new values.

        Returns:
            N×C×H×W counterfactual images, on ``x``'s device.
        """
        return self._run(x, parents, intervention, None)

    def _run(
        self,
        x: torch.Tensor,
        parents: dict[str, torch.Tensor],
        intervention: dict[str, torch.Tensor],
        generator: torch.Generator | None,
    ) -> torch.Tensor:
        """The preamble, then :meth:`counterfactuals` (what every public call of the kind runs)."""
        validate_scm_inputs(x, parents, intervention)
        generator = resolve_generator(generator)
        if x.shape[0] == 0:
            return x.detach().clone()
        return self.counterfactuals(x, parents, intervention, generator)

    @abstractmethod
    def counterfactuals(
        self,
        x: torch.Tensor,
        parents: dict[str, torch.Tensor],
        intervention: dict[str, torch.Tensor],
        generator: torch.Generator,
    ) -> torch.Tensor:
        """The method itself, on checked, non-empty inputs: N×C×H×W counterfactuals of ``x``;
        ``generator`` is the caller's, or a fresh one seeded ``DEFAULT_SEED``. A subclass that does
        not define it cannot be instantiated."""


class StochasticSCMGenerator(SCMGenerator):
    """An :class:`SCMGenerator` that draws random numbers: its call also takes ``generator=``.

    Example:
        >>> class Noise(StochasticSCMGenerator):
        ...     def counterfactuals(self, x, parents, intervention, generator):
        ...         return torch.rand(x.shape, generator=generator)
        >>> x, parents = torch.rand(2, 1, 4, 4), {"a": torch.zeros(2)}
        >>> first = Noise().counterfactual(x, parents, parents, generator=torch.Generator().manual_seed(1))
        >>> torch.equal(first, Noise().counterfactual(x, parents, parents, generator=torch.Generator().manual_seed(1)))
        True
    """

    def counterfactual(
        self,
        x: torch.Tensor,
        parents: dict[str, torch.Tensor],
        intervention: dict[str, torch.Tensor],
        *,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """As :meth:`SCMGenerator.counterfactual`, drawing from ``generator`` (None: a fresh one
        seeded ``DEFAULT_SEED``, so a call without it is deterministic too)."""
        return self._run(x, parents, intervention, generator)
