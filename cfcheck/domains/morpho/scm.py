"""The morpho structural causal model: factors, ancestral sampling and interventions.

    thickness t = 0.5 + Gamma(concentration 10, rate 5)
    intensity i = 64 + 191·sigmoid(2·(t − 2.5) + 0.5·ε),   ε ~ N(0, 1)
    digit     d ~ uniform{0..9}
    style     font, rotation, shear, scale, shift (exogenous)

Every variable draws from its own child stream of one ``numpy.random.SeedSequence``, so
``sample_factors(n, seed)`` is a prefix of ``sample_factors(m, seed)`` for n ≤ m: small splits are
cheap and consistent with large ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import torch

from .fonts import FONTS

NUM_CLASSES = 10
THICKNESS_OFFSET, THICKNESS_CONCENTRATION, THICKNESS_RATE = 0.5, 10.0, 5.0
INTENSITY_MIN, INTENSITY_RANGE = 64.0, 191.0
MAX_ROTATION_DEG, MAX_SHEAR = 12.0, 0.25
SCALE_RANGE = (0.85, 1.1)
MAX_SHIFT_PX = 2.0

_INT_FIELDS = ("digit", "font")
_FLOAT_FIELDS = (
    "rotation",
    "shear",
    "scale",
    "shift_x",
    "shift_y",
    "thickness",
    "intensity",
    "eps",
)
Index = int | slice | torch.Tensor | Sequence[int]


@dataclass(frozen=True)
class MorphoFactors:
    """A batch of SCM variables, each a 1-D tensor of length N.

    ``rotation`` is in degrees, ``shift_*`` and ``thickness`` in output pixels, ``intensity`` in
    grey levels [0, 255] (the SCM produces [64, 255]); ``eps`` is the exogenous intensity noise.
    """

    digit: torch.Tensor
    font: torch.Tensor
    rotation: torch.Tensor
    shear: torch.Tensor
    scale: torch.Tensor
    shift_x: torch.Tensor
    shift_y: torch.Tensor
    thickness: torch.Tensor
    intensity: torch.Tensor
    eps: torch.Tensor

    def __post_init__(self) -> None:
        length = None
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, torch.Tensor) or value.ndim != 1:
                raise TypeError(
                    f"MorphoFactors.{f.name} must be a 1-D torch.Tensor, got "
                    f"{type(value).__name__} with shape {getattr(value, 'shape', None)}"
                )
            expected = torch.int64 if f.name in _INT_FIELDS else torch.float32
            if value.dtype != expected:
                raise TypeError(f"MorphoFactors.{f.name} must be {expected}, got {value.dtype}")
            if length is None:
                length = value.shape[0]
            elif value.shape[0] != length:
                raise ValueError(
                    f"MorphoFactors fields must share one length; digit has {length}, {f.name} has {value.shape[0]}"
                )

    def __len__(self) -> int:
        return int(self.digit.shape[0])

    def __getitem__(self, index: Index) -> MorphoFactors:
        """Sub-batch; an integer index gives a batch of one so every field stays 1-D."""
        if isinstance(index, int):
            if not -len(self) <= index < len(self):
                raise IndexError(f"index {index} out of range for {len(self)} factors")
            index = slice(index % len(self), index % len(self) + 1)
        elif not isinstance(index, (slice, torch.Tensor)):
            index = torch.as_tensor(index, dtype=torch.int64)
        return MorphoFactors(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @classmethod
    def cat(cls, parts: Sequence[MorphoFactors]) -> MorphoFactors:
        """Concatenate batches in order."""
        parts = list(parts)
        if not parts:
            raise ValueError("MorphoFactors.cat needs at least one batch, got an empty sequence")
        return cls(**{f.name: torch.cat([getattr(p, f.name) for p in parts]) for f in fields(cls)})

    def to_dict(self) -> dict[str, torch.Tensor]:
        """Field name → tensor (e.g. for safetensors or a DataFrame)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def intensity_mechanism(thickness: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """i = 64 + 191·sigmoid(2·(t − 2.5) + 0.5·ε), evaluated in float64 and returned as float32.

    The float64 detour makes the float32 result (practically) independent of batch size and
    SIMD path, so re-evaluating the mechanism on a sub-batch reproduces the stored intensities.
    """
    logit = 2.0 * (thickness.double() - 2.5) + 0.5 * eps.double()
    return (INTENSITY_MIN + INTENSITY_RANGE * torch.sigmoid(logit)).float()


def abduct_intensity_noise(thickness: torch.Tensor, intensity: torch.Tensor) -> torch.Tensor:
    """ε such that ``intensity_mechanism(thickness, ε) == intensity``: the mechanism is invertible,
    so abduction from the observed parents is exact (float64; intensities at the bounds clipped)."""
    share = ((intensity.double() - INTENSITY_MIN) / INTENSITY_RANGE).clamp(1e-12, 1 - 1e-12)
    return ((torch.logit(share) - 2.0 * (thickness.double() - 2.5)) / 0.5).float()


def sample_factors(n: int, seed: int) -> MorphoFactors:
    """Ancestral sample of ``n`` factor tuples, a deterministic function of ``seed``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(9)]
    (s_thick, s_eps, s_digit, s_font, s_rot, s_shear, s_scale, s_x, s_y) = streams

    def f32(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.asarray(array, dtype=np.float32))

    thickness = f32(THICKNESS_OFFSET + s_thick.gamma(THICKNESS_CONCENTRATION, 1.0 / THICKNESS_RATE, size=n))
    eps = f32(s_eps.standard_normal(n))
    return MorphoFactors(
        digit=torch.from_numpy(s_digit.integers(0, NUM_CLASSES, size=n, dtype=np.int64)),
        font=torch.from_numpy(s_font.integers(0, len(FONTS), size=n, dtype=np.int64)),
        rotation=f32(s_rot.uniform(-MAX_ROTATION_DEG, MAX_ROTATION_DEG, size=n)),
        shear=f32(s_shear.uniform(-MAX_SHEAR, MAX_SHEAR, size=n)),
        scale=f32(s_scale.uniform(*SCALE_RANGE, size=n)),
        shift_x=f32(s_x.uniform(-MAX_SHIFT_PX, MAX_SHIFT_PX, size=n)),
        shift_y=f32(s_y.uniform(-MAX_SHIFT_PX, MAX_SHIFT_PX, size=n)),
        thickness=thickness,
        intensity=intensity_mechanism(thickness, eps),
        eps=eps,
    )


def _broadcast(name: str, value: object, n: int, dtype: torch.dtype) -> torch.Tensor:
    tensor = torch.as_tensor(value)
    if tensor.ndim == 0:
        tensor = tensor.expand(n)
    if tensor.shape != (n,):
        raise ValueError(f"{name} must be a scalar or a tensor of shape ({n},), got {tuple(tensor.shape)}")
    if dtype == torch.int64 and tensor.is_floating_point() and not torch.equal(tensor, tensor.round()):
        raise ValueError(f"{name} must hold integers, got {tensor}")
    if not torch.isfinite(tensor.double()).all():
        raise ValueError(f"{name} must be finite")
    return tensor.to(dtype).clone()


def intervene(
    factors: MorphoFactors,
    *,
    thickness: object = None,
    intensity: object = None,
    digit: object = None,
) -> MorphoFactors:
    """do() on the SCM, keeping all exogenous noise (style and ε).

    do(t) recomputes the intensity from the new t and the same ε (intensity is t's child);
    do(i) sets the intensity only; do(d) changes the digit only. do(t) and do(i) together set both.
    The null intervention returns the factors unchanged.
    """
    if not isinstance(factors, MorphoFactors):
        raise TypeError(f"factors must be MorphoFactors, got {type(factors).__name__}")
    n = len(factors)
    changes: dict[str, torch.Tensor] = {}
    if digit is not None:
        d = _broadcast("digit", digit, n, torch.int64)
        if ((d < 0) | (d >= NUM_CLASSES)).any():
            raise ValueError(f"digit must lie in [0, {NUM_CLASSES - 1}], got values in [{d.min()}, {d.max()}]")
        changes["digit"] = d
    if thickness is not None:
        t = _broadcast("thickness", thickness, n, torch.float32)
        if (t <= 0).any():
            raise ValueError(f"thickness must be > 0 output pixels, got min {t.min().item():.4g}")
        changes["thickness"] = t
        changes["intensity"] = intensity_mechanism(t, factors.eps)
    if intensity is not None:
        i = _broadcast("intensity", intensity, n, torch.float32)
        if ((i < 0) | (i > 255)).any():
            raise ValueError(f"intensity must lie in [0, 255], got values in [{i.min():.4g}, {i.max():.4g}]")
        changes["intensity"] = i
    return replace(factors, **changes) if changes else factors
