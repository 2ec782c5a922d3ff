"""Minimality of an SCM counterfactual: the Counterfactual Latent Divergence (CLD).

Melistas et al. 2024, §3.2 (after Sanchez & Tsaftaris 2022), eq. (9)::

    CLD = log(w1 · exp P(S_x* ≤ div) + w2 · exp P(S_x ≥ div))

``div = d(x*, x)`` is the distance of the counterfactual from its factual; ``S_x`` is the set of
distances ``d(x', x)`` from real images x' whose intervened parent has the factual's value (its
bin, for a continuous parent), ``S_x*`` the same for real images with the counterfactual's value.
``d`` is the KL divergence between the Gaussian posteriors of an unconditional VAE,
``d(a, b) = KL(q(z | a) ‖ q(z | b))`` (the reference implementation's order: the factual is the
second argument). A counterfactual is minimal when it is closer to x than most real images of
its new value are (P(S_x* ≤ div) low) yet not closer than real images of x's own value (P(S_x ≥
div) low). The weights are theirs: w1 = 0.8, w2 = 0.2. Lower is better; the range is [log(w1 +
w2), log(w1·e + w2·e)] = [0, 1] for w1 + w2 = 1.

Pure functions: the suite encodes the images and builds the sets.
"""

from __future__ import annotations

import math

import torch  # noqa: F401  (the doctest examples)
from torch import Tensor

from cfcheck.metrics._validation import check_float_tensor, check_same_shape, check_tensor

__all__ = ["CLD_WEIGHTS", "counterfactual_latent_divergence", "gaussian_kl"]

#: (w1, w2) of Melistas et al. 2024 (§4.3)
CLD_WEIGHTS = (0.8, 0.2)


def gaussian_kl(mean_q: Tensor, log_var_q: Tensor, mean_p: Tensor, log_var_p: Tensor) -> Tensor:
    """KL(N(mean_q, diag exp(log_var_q)) ‖ N(mean_p, diag exp(log_var_p))) per row, in nats.

    Uses both the means and the log-variances (closed form, summed over the last dimension)::

        ½ Σ_k [log_var_p − log_var_q + (exp(log_var_q) + (mean_q − mean_p)²) / exp(log_var_p) − 1]

    Args:
        mean_q, log_var_q: posterior mean and log-variance of the first distribution, ...×D.
        mean_p, log_var_p: the second distribution's, broadcastable against the first pair.

    Returns:
        The divergence per row (the broadcast shape without its last dimension), float64.

    Raises:
        TypeError: for non-float tensors.
        ValueError: for non-finite values, a scalar input, or shapes that do not broadcast.

    Example:
        >>> gaussian_kl(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(1, 2))
        tensor([1.], dtype=torch.float64)
    """
    names = ("mean_q", "log_var_q", "mean_p", "log_var_p")
    tensors = [
        check_float_tensor(n, t, min_ndim=1).double() for n, t in zip(names, (mean_q, log_var_q, mean_p, log_var_p))
    ]
    check_same_shape("mean_q", tensors[0], "log_var_q", tensors[1])
    check_same_shape("mean_p", tensors[2], "log_var_p", tensors[3])
    try:
        torch.broadcast_shapes(tensors[0].shape, tensors[2].shape)
    except RuntimeError:
        raise ValueError(
            f"the q and p posteriors must broadcast, got shapes {tuple(tensors[0].shape)} and {tuple(tensors[2].shape)}"
        ) from None
    mq, lq, mp, lp = tensors
    return 0.5 * (lp - lq + (lq.exp() + (mq - mp) ** 2) / lp.exp() - 1.0).sum(-1)


def counterfactual_latent_divergence(
    div: Tensor,
    distances: Tensor,
    factual_set: Tensor,
    counterfactual_set: Tensor,
    weights: tuple[float, float] = CLD_WEIGHTS,
) -> tuple[Tensor, Tensor, Tensor]:
    """CLD per counterfactual (module docstring, eq. 9), with its two probabilities.

    Args:
        div: N distances d(x*_n, x_n) of each counterfactual from its factual.
        distances: N×M distances d(x'_m, x_n) of M real images from each factual.
        factual_set: N×M bool, True where x'_m has the factual's value of the intervened parent (S_x).
        counterfactual_set: N×M bool, True where x'_m has the counterfactual's value (S_x*).
        weights: (w1, w2), non-negative with a positive sum.

    Returns:
        ``(cld, p_counterfactual, p_factual)``, each N (float64): P(S_x* ≤ div) and P(S_x ≥ div)
        are the fractions of each set within (beyond) the counterfactual's distance.

    Raises:
        TypeError, ValueError: for wrong types, shapes, negative or non-finite distances, bad
            weights, or a row whose S_x or S_x* is empty (no real image of that value).

    Example:
        >>> d = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
        >>> sx, scf = torch.tensor([[True, True, False, False]]), torch.tensor([[False, False, True, True]])
        >>> cld, p_cf, p_f = counterfactual_latent_divergence(torch.tensor([2.5]), d, sx, scf)
        >>> float(p_cf), float(p_f)
        (0.0, 0.0)
        >>> round(float(cld), 6)
        0.0
    """
    div_t = check_float_tensor("div", div, ndim=1).double()
    dist_t = check_float_tensor("distances", distances, ndim=2).double()
    if dist_t.shape[0] != div_t.shape[0]:
        raise ValueError(f"`distances` must have one row per counterfactual ({div_t.shape[0]}), got {dist_t.shape[0]}")
    if bool((div_t < 0).any()) or bool((dist_t < 0).any()):
        raise ValueError("`div` and `distances` must be non-negative (they are divergences)")
    masks = []
    for name, mask in (("factual_set", factual_set), ("counterfactual_set", counterfactual_set)):
        mask_t = check_tensor(name, mask)
        if mask_t.dtype != torch.bool:
            raise TypeError(f"`{name}` must be a bool tensor, got {mask_t.dtype}")
        check_same_shape(name, mask_t, "distances", dist_t)
        empty = (~mask_t.any(1)).nonzero().flatten().tolist()
        if empty:
            raise ValueError(f"`{name}` is empty in rows {empty[:10]}: no real image has that parent value")
        masks.append(mask_t)
    w1, w2 = weights
    if (
        not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w >= 0 for w in (w1, w2)
        )
        or w1 + w2 <= 0
    ):
        raise ValueError(f"weights must be two finite non-negative numbers with a positive sum, got {weights!r}")
    factual, counterfactual = masks
    within = (dist_t <= div_t[:, None]) & counterfactual
    beyond = (dist_t >= div_t[:, None]) & factual
    p_counterfactual = within.sum(1).double() / counterfactual.sum(1).double()
    p_factual = beyond.sum(1).double() / factual.sum(1).double()
    cld = torch.log(w1 * p_counterfactual.exp() + w2 * p_factual.exp())
    return cld, p_counterfactual, p_factual
