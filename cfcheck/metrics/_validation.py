"""Argument checks shared by the metric functions.

Every public metric validates its inputs up front so that a wrong shape, dtype or range
fails with a message naming the argument, what was expected and what was received,
instead of broadcasting silently into a meaningless score.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor


def describe(value: object) -> str:
    """Short description of a value for error messages."""
    if isinstance(value, Tensor):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    return type(value).__name__


def check_tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor, got {describe(value)}")
    return value


def check_float_tensor(name: str, value: object, *, ndim: int | None = None, min_ndim: int = 0) -> Tensor:
    """A floating-point tensor with the given rank and only finite values."""
    tensor = check_tensor(name, value)
    if not tensor.is_floating_point():
        raise TypeError(f"`{name}` must have a floating-point dtype, got {tensor.dtype}")
    if ndim is not None and tensor.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-D, got shape {tuple(tensor.shape)}")
    if tensor.ndim < min_ndim:
        raise ValueError(f"`{name}` must have at least {min_ndim} dimensions, got shape {tuple(tensor.shape)}")
    if tensor.numel():
        # min and max propagate NaN and show ±inf: one reduction, no bool tensor (isfinite().all()
        # takes about 20 times longer on a CPU)
        low, high = torch.aminmax(tensor.detach())
        if not (math.isfinite(float(low)) and math.isfinite(float(high))):
            raise ValueError(f"`{name}` contains NaN or infinite values")
    return tensor


def check_range(name: str, tensor: Tensor, value_range: tuple[float, float] | None) -> None:
    """Values within ``value_range`` (inclusive); ``None`` disables the check."""
    if value_range is None or tensor.numel() == 0:
        return
    low, high = value_range
    values = tensor.detach()
    t_min, t_max = float(values.min()), float(values.max())
    if t_min < low or t_max > high:
        raise ValueError(
            f"`{name}` must lie in [{low}, {high}] (the normalisation the metric cards assume), "
            f"got values in [{t_min:.4g}, {t_max:.4g}]"
        )


def check_same_shape(name_a: str, a: Tensor, name_b: str, b: Tensor) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"`{name_a}` and `{name_b}` must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}"
        )


def check_image_pair(
    x: object, c: object, *, value_range: tuple[float, float] | None, names: tuple[str, str] = ("x", "c")
) -> tuple[Tensor, Tensor]:
    """Two batches of images (N×...) of identical shape and dtype family, finite, in range."""
    x_t = check_float_tensor(names[0], x, min_ndim=2)
    c_t = check_float_tensor(names[1], c, min_ndim=2)
    check_same_shape(names[0], x_t, names[1], c_t)
    check_range(names[0], x_t, value_range)
    check_range(names[1], c_t, value_range)
    return x_t, c_t


def check_predictions(name: str, value: object, *, num_classes: int | None = None) -> Tensor:
    """A 1-D int64 tensor of class indices in ``[0, num_classes)``."""
    tensor = check_tensor(name, value)
    if tensor.dtype != torch.int64:
        raise TypeError(f"`{name}` must be an int64 tensor of class indices, got dtype {tensor.dtype}")
    if tensor.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one class index per image), got shape {tuple(tensor.shape)}")
    if tensor.numel():
        low, high = int(tensor.min()), int(tensor.max())
        if low < 0:
            raise ValueError(f"`{name}` must contain non-negative class indices, got minimum {low}")
        if num_classes is not None and high >= num_classes:
            raise ValueError(f"`{name}` must contain class indices < num_classes={num_classes}, got maximum {high}")
    return tensor


def check_num_classes(num_classes: object) -> int | None:
    if num_classes is None:
        return None
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"`num_classes` must be a positive int or None, got {num_classes!r}")
    return num_classes


def check_same_length(**tensors: Tensor) -> None:
    lengths = {name: int(t.shape[0]) for name, t in tensors.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"`{name}` has {n}" for name, n in lengths.items())
        raise ValueError(f"arguments must have the same length (one entry per image): {listed}")


def check_probabilities(name: str, value: object, *, atol: float = 1e-3) -> Tensor:
    """An N×K matrix of non-negative rows summing to one (within ``atol``)."""
    probs = check_float_tensor(name, value, ndim=2)
    if probs.shape[1] < 1:
        raise ValueError(f"`{name}` must have at least one class column, got shape {tuple(probs.shape)}")
    if probs.numel():
        if float(probs.min()) < 0:
            raise ValueError(f"`{name}` must be non-negative probabilities, got minimum {float(probs.min()):.4g}")
        row_sums = probs.double().sum(dim=1)
        worst = float((row_sums - 1).abs().max())
        if worst > atol:
            raise ValueError(
                f"`{name}` rows must sum to 1 (probabilities, e.g. softmax outputs, not logits); "
                f"the worst row is off by {worst:.4g}"
            )
    return probs


def check_positive_int(name: str, value: object, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise ValueError(f"`{name}` must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_real(name: str, value: object, *, minimum: float | None = None, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not allow_inf):
        raise ValueError(f"`{name}` must be finite, got {number}")
    if minimum is not None and number < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {number}")
    return number


def as_float64_matrix(name: str, value: object, *, min_rows: int = 1) -> Tensor:
    """A finite 2-D (rows × features) array or tensor as a float64 CPU tensor."""
    if isinstance(value, np.ndarray):
        if not (np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)):
            raise TypeError(f"`{name}` must be numeric, got dtype {value.dtype}")
        tensor = torch.from_numpy(np.asarray(value, dtype=np.float64))
    elif isinstance(value, Tensor):
        if value.dtype == torch.bool or value.is_complex():
            raise TypeError(f"`{name}` must be a real numeric tensor, got dtype {value.dtype}")
        tensor = value.detach().to(device="cpu", dtype=torch.float64)
    else:
        raise TypeError(f"`{name}` must be a torch.Tensor or numpy.ndarray, got {describe(value)}")
    if tensor.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (samples × features), got shape {tuple(tensor.shape)}")
    if tensor.shape[0] < min_rows:
        raise ValueError(f"`{name}` needs at least {min_rows} rows (samples), got {tensor.shape[0]}")
    if tensor.shape[1] < 1:
        raise ValueError(f"`{name}` needs at least one feature column, got shape {tuple(tensor.shape)}")
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"`{name}` contains NaN or infinite values")
    return tensor
