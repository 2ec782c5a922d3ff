"""``cfcheck retrain``, ``cards``, ``models`` and ``transfer``: what cfcheck ships, its reference
models and its metric cards."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``retrain``, ``cards``, ``models`` and ``transfer`` through ``command`` (name, help → its
    parser); each name → what runs it."""
    from cfcheck.core.retrain import add_retrain_arguments

    add_retrain_arguments(command("retrain", help="retrain the bundled reference models deterministically"))

    cards = command("cards", help="print the metric cards")
    cards.add_argument("keys", nargs="*", help="metric keys (default: all)")

    models = command("models", help="list the bundled reference models and their measured quality")
    models.add_argument("--domain", default=None, help="list only this domain's models (default: every domain)")

    transfer = command(
        "transfer",
        help="how often targeted PGD examples on an explained classifier fool the oracles too (the model cards' figures)",
    )
    transfer.add_argument("--domain", required=True, help="domain of the split and models (a registered name or spec)")
    transfer.add_argument("--n", type=int, default=300, help="images attacked (default 300)")
    transfer.add_argument("--eps", type=float, default=0.15, help="L∞ radius in [0, 1] pixel units (default 0.15)")
    transfer.add_argument("--steps", type=int, default=40, help="PGD steps (default 40)")
    transfer.add_argument("--seed", type=int, default=0, help="seeds the images, targets and random start")
    transfer.add_argument(
        "--source", default=None, help="the attacked model (default: the domain's first explained one)"
    )
    transfer.add_argument(
        "--evaluated",
        nargs="*",
        default=None,
        help="models whose target rate is reported too (default: the class-attribute oracle)",
    )
    transfer.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    return {"retrain": _retrain, "cards": _cards, "models": _models, "transfer": _transfer}


def _retrain(args: argparse.Namespace) -> int:
    """Hand the request to the domain's recipe function (:meth:`cfcheck.domains.base.BundledDomain.retrain`)."""
    from cfcheck.core.retrain import retrain_request
    from cfcheck.domains import available_domains, get_domain
    from cfcheck.domains.base import BundledDomain

    request = retrain_request(
        args, args.domain if args.domain is not None else _domain_holding(args.only or [], available_domains())
    )
    domain = get_domain(request.domain)
    if not isinstance(domain, BundledDomain):
        raise ValueError(f"domain {request.domain!r} has no bundled models: cfcheck retrains the models it ships")
    domain.retrain(request)
    return 0


def _domain_holding(names: list[str], domains: Sequence[str]) -> str:
    """The one registered domain whose model store holds every model in ``names``; ValueError otherwise."""
    from cfcheck.domains import get_domain

    holders = [d for d in domains if names and set(names) <= set(get_domain(d).model_store.names())]
    if len(holders) != 1:
        which = f"the domains holding {', '.join(names)}: {', '.join(holders) or 'none'}" if names else "no --only"
        raise ValueError(f"cfcheck retrain: name the domain with --domain ({which}); registered: {', '.join(domains)}")
    return holders[0]


def _cards(args: argparse.Namespace) -> int:
    from cfcheck.kinds.registry import declarations
    from cfcheck.metrics.cards import CARDS, card_of, format_card
    from cfcheck.reporting.card_evidence import bundled_evidence

    declarations()  # loading the kinds registers their own cards

    cards = [card_of(key) for key in args.keys] if args.keys else list(CARDS.values())  # `key:variant` reads its card
    print(
        "\n\n".join(
            format_card(card, bundled_evidence(card.key), function_sources(card.computed_by) if args.keys else None)
            for card in cards
        )
    )
    return 0


def function_sources(names: Sequence[str]) -> dict[str, str]:
    """Function name (``package.module.function``) → ``path:line`` where it is defined (the path relative
    to the installed cfcheck's parent), or why it cannot be found."""
    import importlib
    import inspect

    root = Path(__file__).resolve().parents[2]  # the installed cfcheck's parent
    found = {}
    for name in names:
        module_name, _, attribute = name.rpartition(".")
        try:
            function = inspect.unwrap(getattr(importlib.import_module(module_name), attribute))
            path = Path(inspect.getsourcefile(function) or "?").resolve()
            found[name] = (
                f"{path.relative_to(root) if path.is_relative_to(root) else path}:{inspect.getsourcelines(function)[1]}"
            )
        except (ImportError, AttributeError, TypeError, OSError) as error:
            found[name] = f"not found: {error}"
    return found


def _models(args: argparse.Namespace) -> int:
    from cfcheck.domains import available_domains
    from cfcheck.models.registry import available_models, model_entry

    if args.domain is not None and args.domain not in available_domains():
        raise ValueError(f"unknown domain {args.domain!r}; known domains: {', '.join(available_domains())}")
    for key in available_models(args.domain):  # "<domain>/<name>" without --domain
        domain, name = (args.domain, key) if args.domain is not None else key.split("/", 1)
        entry = model_entry(name, domain=domain)
        quality = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in entry["quality"].items())
        print(f"{domain}/{name:16s} {entry['role']:17s} {entry['sha256'][:12]}  {quality}")
    return 0


def _transfer(args: argparse.Namespace) -> int:
    """Print the transfer rates of :func:`cfcheck.models.classifiers.transfer.adversarial_transfer` as JSON."""
    import json

    import torch

    from cfcheck.domains import get_domain
    from cfcheck.models.classifiers.transfer import adversarial_transfer

    domain = get_domain(args.domain)
    torch.set_num_threads(args.threads)
    rates = adversarial_transfer(
        args.n,
        domain=domain,
        eps=args.eps,
        steps=args.steps,
        seed=args.seed,
        source=args.source,
        evaluated=args.evaluated,
    )
    shown = {"domain": domain.name, "n": args.n, "eps": args.eps, "steps": args.steps, "seed": args.seed}
    print(json.dumps({**shown, "source": next(iter(rates)), "target_rate": rates}, indent=2))  # the source first
    return 0
