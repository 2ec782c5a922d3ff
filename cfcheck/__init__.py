"""cfcheck: a pytest conformance suite for counterfactual methods."""

__version__ = "0.1.0"
