"""Retraining a domain's bundled models: the one argument parser and the request it gives.

``cfcheck retrain`` and a domain's own training module (``python -m cfcheck.domains.<domain>.training``)
read the same options
(:func:`add_retrain_arguments`) into a :class:`RetrainRequest`. ``cfcheck retrain`` hands it to the
domain's recipe function (:meth:`cfcheck.domains.base.BundledDomain.retrain`: cfcheck's classifier
and generative recipes, :func:`cfcheck.models.retrain.train_with_cfcheck_recipes`, unless the
domain trains its models with recipes of its own). Torch-free, so ``cfcheck --help`` stays quick.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RetrainRequest", "add_retrain_arguments", "retrain_request"]


@dataclass(frozen=True)
class RetrainRequest:
    """What to retrain, where and how.

    Attributes:
        domain: the domain's registered name.
        only: the models to retrain (None: all of the domain's).
        out: the domain folder written (None: the bundled one; a smoke run needs another).
        smoke: train each recipe's tiny configuration (tests of the recipes).
        device: the torch device of the classifier recipes.
        threads: torch CPU threads while training (recorded per entry).
        log: receives progress lines.
    """

    domain: str
    only: list[str] | None = None
    out: Path | None = None
    smoke: bool = False
    device: str = "cpu"
    threads: int = 1
    log: Callable[[str], None] = field(default=print, compare=False)


def add_retrain_arguments(parser: argparse.ArgumentParser, *, domain: str | None = "optional") -> None:
    """The retraining options: ``--domain`` (``domain``: "optional", "required", or None where the
    command belongs to one domain), ``--only NAME`` (repeatable), ``--smoke``, ``--out``,
    ``--device`` and ``--threads``."""
    if domain not in ("optional", "required", None):
        raise ValueError(f"`domain` must be 'optional', 'required' or None, got {domain!r}")
    if domain is not None:
        parser.add_argument(
            "--domain",
            required=domain == "required",
            default=None,
            help="domain whose models to retrain (a registered name)"
            + ("" if domain == "required" else "; default: the registered domain whose store holds every --only model"),
        )
    parser.add_argument("--only", action="append", metavar="NAME", help="retrain only this model (repeatable)")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny configuration, for testing the recipes (needs --out)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output domain folder (default: the bundled reference_models/<domain>/)"
    )
    parser.add_argument("--device", default="cpu", help="torch device of the classifier recipes (default cpu)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")


def retrain_request(
    args: argparse.Namespace, domain: str | None = None, log: Callable[[str], None] = print
) -> RetrainRequest:
    """The request of parsed :func:`add_retrain_arguments` options (``domain``: the command's own
    domain, or the one resolved for an omitted ``--domain``)."""
    name = domain if domain is not None else args.domain
    if name is None:
        raise ValueError("no domain to retrain: name it with --domain")
    return RetrainRequest(
        domain=name, only=args.only, out=args.out, smoke=args.smoke, device=args.device, threads=args.threads, log=log
    )
