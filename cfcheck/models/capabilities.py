"""What a domain may offer ``cfcheck retrain`` and the model code, as typed protocols (checked with
``isinstance``, never probed attribute by attribute)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class GenerativeRecipes(Protocol):
    """A domain with generative models trained by cfcheck's generative recipes."""

    def generative_recipes(self) -> dict[str, Any]: ...


@runtime_checkable
class ClassifierRecipes(Protocol):
    """A domain whose classifiers (explained, oracles, embedding) cfcheck's recipes train."""

    def model_recipes(self) -> Any: ...
