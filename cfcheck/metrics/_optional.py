"""Optional heavy backends (lpips/torchvision) and the error raised when they are missing.

The CPU-only torch build cfcheck targets cannot import every torchvision wheel, so the
real-LPIPS path is an extra rather than a hard dependency; the error says how to get it.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class OptionalDependencyError(ImportError):
    """An optional backend needed by the called function is not importable."""


def require(module: str, *, extra: str, purpose: str, note: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`OptionalDependencyError` with install advice.

    Import failures of binary extensions (a torchvision built for another torch raises
    ``RuntimeError``/``OSError`` rather than ``ImportError``) are reported the same way,
    because the remedy is the same: install a matching build.
    """
    try:
        return importlib.import_module(module)
    except (ImportError, RuntimeError, OSError) as err:
        message = (
            f"{purpose} needs the optional package {module!r}, which could not be imported "
            f'({type(err).__name__}: {err}). Install it with: pip install "cfcheck[{extra}]".'
        )
        if note:
            message += f" {note}"
        raise OptionalDependencyError(message, name=module) from err
