"""A one-dimensional (optionally conditional) rational-quadratic spline flow from ``normflows``.

The flow models one scalar variable v, optionally given a context vector c (its parents in an
SCM). Both are standardised *outside* the flow with fixed statistics stored as buffers (set
from the training data by :meth:`ScalarSplineFlow.set_standardisation`), so the splines work on
values of order one: inside ±``tail_bound`` they are monotone rational-quadratic splines
(Durkan et al. 2019), beyond it the identity (linear tails).

The exogenous noise of the mechanism is the flow's base variable u ~ N(0, 1):

* abduction ``u = abduct(v, c)`` is the inverse pass (data → base);
* prediction ``v = predict(u, c)`` is the forward pass (base → data) under new parents c.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ScalarSplineFlow"]


def _check_column(name: str, value: torch.Tensor, n: int | None, width: int) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.ndim == 1 and width == 1:
        value = value[:, None]
    if value.ndim != 2 or value.shape[1] != width or (n is not None and value.shape[0] != n):
        expected = f"({n if n is not None else 'N'}, {width})" + (" or (N,)" if width == 1 else "")
        raise ValueError(f"{name} must have shape {expected}, got {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} must be finite")
    return value.float()


class ScalarSplineFlow(nn.Module):
    """p(v | c) as a stack of autoregressive rational-quadratic spline layers on one variable.

    With one variable, normflows' autoregressive spline has no earlier variables to condition
    on: its knots come from the context alone (a MADE over the context), or from learned
    constants when there is no context.

    Args:
        context_features: length of the context vector (0: an unconditional flow).
        num_layers: spline layers stacked.
        hidden: hidden units of each layer's knot network.
        num_blocks: residual blocks of each knot network.
        num_bins: spline bins on [-tail_bound, tail_bound].
        tail_bound: where the splines end and the linear (identity) tails begin, in standard units.

    Example:
        >>> flow = ScalarSplineFlow(context_features=1)
        >>> v, c = torch.randn(4), torch.randn(4, 1)
        >>> torch.allclose(flow.predict(flow.abduct(v, c), c), v, atol=1e-5)
        True
    """

    value_loc: torch.Tensor  # a buffer (register_buffer)
    value_scale: torch.Tensor  # a buffer (register_buffer)
    context_loc: torch.Tensor  # a buffer (register_buffer)
    context_scale: torch.Tensor  # a buffer (register_buffer)

    def __init__(
        self,
        context_features: int = 0,
        num_layers: int = 2,
        hidden: int = 32,
        num_blocks: int = 2,
        num_bins: int = 8,
        tail_bound: float = 3.0,
    ) -> None:
        super().__init__()
        import normflows as nf

        for name, value, low in (
            ("context_features", context_features, 0),
            ("num_layers", num_layers, 1),
            ("hidden", hidden, 1),
            ("num_blocks", num_blocks, 1),
            ("num_bins", num_bins, 2),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if not tail_bound > 0:
            raise ValueError(f"tail_bound must be > 0, got {tail_bound!r}")
        self.context_features = context_features
        layers = [
            nf.flows.AutoregressiveRationalQuadraticSpline(
                1,
                num_blocks,
                hidden,
                num_context_channels=context_features or None,
                num_bins=num_bins,
                tail_bound=tail_bound,
            )
            for _ in range(num_layers)
        ]
        self.flow = nf.ConditionalNormalizingFlow(nf.distributions.DiagGaussian(1, trainable=False), layers)
        self.register_buffer("value_loc", torch.zeros(1))
        self.register_buffer("value_scale", torch.ones(1))
        self.register_buffer("context_loc", torch.zeros(max(1, context_features)))
        self.register_buffer("context_scale", torch.ones(max(1, context_features)))

    # -- standardisation (outside the flow) ----------------------------------------------------
    def set_standardisation(self, values: torch.Tensor, context: torch.Tensor | None = None) -> None:
        """Stores the mean and standard deviation of the training ``values`` (and ``context``)."""
        v = _check_column("values", values, None, 1)
        self.value_loc.copy_(v.mean(0))
        self.value_scale.copy_(v.std(0).clamp_min(1e-6))
        if self.context_features:
            c = _check_column("context", self._need_context(context), v.shape[0], self.context_features)
            self.context_loc.copy_(c.mean(0))
            self.context_scale.copy_(c.std(0).clamp_min(1e-6))

    def _need_context(self, context: torch.Tensor | None) -> torch.Tensor:
        if context is None:
            raise ValueError(f"this flow is conditional: pass a context of {self.context_features} features")
        return context

    def _context(self, context: torch.Tensor | None, n: int) -> torch.Tensor | None:
        if not self.context_features:
            if context is not None:
                raise ValueError("this flow is unconditional: pass context=None")
            return None
        c = _check_column("context", self._need_context(context), n, self.context_features)
        return (c - self.context_loc) / self.context_scale

    # -- the mechanism ------------------------------------------------------------------------
    def abduct(self, values: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """The exogenous noise u (N,) of each value: the inverse pass.

        Args:
            values: (N,) or (N, 1) observed values.
            context: (N, context_features) observed parents (``None`` for an unconditional flow).

        Returns:
            (N,) base-space noise.
        """
        v = _check_column("values", values, None, 1)
        c = self._context(context, v.shape[0])
        return self.flow.inverse((v - self.value_loc) / self.value_scale, c)[:, 0]

    def predict(self, noise: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """The values (N,) the mechanism gives noise u under ``context``: the forward pass.

        Args:
            noise: (N,) or (N, 1) base-space noise.
            context: (N, context_features) parents (``None`` for an unconditional flow).

        Returns:
            (N,) values in the data's units.
        """
        u = _check_column("noise", noise, None, 1)
        c = self._context(context, u.shape[0])
        return (self.flow.forward(u, c) * self.value_scale + self.value_loc)[:, 0]

    def log_prob(self, values: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """log p(v | c) per value (N,), in the data's units (the standardisation's Jacobian included)."""
        v = _check_column("values", values, None, 1)
        c = self._context(context, v.shape[0])
        return self.flow.log_prob((v - self.value_loc) / self.value_scale, c) - self.value_scale.log().sum()

    def sample(
        self, n: int, context: torch.Tensor | None = None, *, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """n values (N,) drawn from p(v | c): u ~ N(0, 1) from ``generator``, then predicted."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        device = generator.device if generator is not None else torch.device("cpu")
        noise = torch.randn(n, generator=generator, device=device).to(self.value_loc.device)
        return self.predict(noise, None if context is None else context.to(self.value_loc.device))

    def forward(self, values: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """log p(v | c) (what a registry-built module's call returns)."""
        return self.log_prob(values, context)
