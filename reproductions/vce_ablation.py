"""Ablations of a VCE method over its switches, as Väth et al. (2023) §5 run them.

:func:`ablation_table` runs one method factory per setting on the scored inputs of a pair set
and reports, per explained classifier, what their hypotheses H1–H5 are stated in:

* ``ta``: target accuracy, the explained classifier's agreement with the target on every
  output (abstentions included: an ablation compares what the method produced);
* ``ota``: the oracle committee's majority vote equal to the target (Väth's OTA);
* ``oracle_changed``: the committee's majority vote on the output differs from its vote on the
  input (a change the oracles can see, whatever it turned into; H2's measure on the random
  classifier);
* ``kept``: the share of inputs the method did not abstain on (the rejection step's effect);
* ``l1``: mean absolute pixel change.

The benchmark ``benchmarks/bench_dvce.py`` prints the full-size table for the findings; the tests
in ``tests/test_diffusion_hypotheses.py`` assert the hypotheses on :func:`hypotheses_table`'s small
one, per seed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from cfcheck.kinds.vce.spec import committee_ideal_targets
from cfcheck.kinds.vce.tasks import TaskInputs, select_inputs

__all__ = ["NON_ROBUST", "AblationRow", "ablation_inputs", "ablation_table", "hypotheses_table"]

NON_ROBUST = ("cnn", "mlp", "noise_cnn")


@dataclass(frozen=True)
class AblationRow:
    """One (setting, classifier) cell of an ablation: the rates of the module docstring."""

    setting: str
    classifier: str
    n: int
    ta: float
    ota: float
    oracle_changed: float
    kept: float
    l1: float
    seconds_per_input: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _committee_votes(zoo: Any, images: torch.Tensor) -> torch.Tensor:
    return torch.stack([zoo.logits(o, images).argmax(1) for o in zoo.oracles]).mode(0).values


def ablation_inputs(domain: Any, zoo: Any, pair_set: str, n_per_source: int, seed: int = 0) -> TaskInputs:
    """The scored inputs of ``pair_set`` as a VCE task of that size and seed would draw them."""
    scored = domain.split(domain.split_roles["scored"])
    return select_inputs(
        scored.images,
        scored.labels,
        pair_set=pair_set,
        seed=seed,
        n_per_source=n_per_source,
        ideal=committee_ideal_targets(zoo, domain),
        num_classes=domain.num_classes,
    )


def ablation_table(
    factories: Mapping[str, Callable[[], Any]],
    classifiers: Sequence[str],
    domain: Any,
    zoo: Any,
    inputs: TaskInputs,
    *,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> list[AblationRow]:
    """Runs every setting's method on ``inputs`` for every classifier.

    Args:
        factories: setting name → zero-argument factory of the method (``explain(x, target,
            classifier, *, generator)`` returning ``x_cf`` or ``(x_cf, valid)``).
        classifiers: explained classifier names in ``zoo``.
        domain: the domain the inputs come from.
        zoo: its :class:`cfcheck.models.zoo.ModelZoo`.
        inputs: from :func:`ablation_inputs`.
        seed: seeds each call's generator.
        log: receives one line per cell.

    Returns:
        One :class:`AblationRow` per (setting, classifier), settings outer.
    """
    rows = []
    before = _committee_votes(zoo, inputs.x)
    for setting, factory in factories.items():
        method = factory()
        for name in classifiers:
            started = time.perf_counter()
            out = method.explain(inputs.x, inputs.target, zoo[name], generator=torch.Generator().manual_seed(seed))
            seconds = time.perf_counter() - started
            cfs, valid = out if isinstance(out, tuple) else (out, torch.ones(len(inputs), dtype=torch.bool))
            if cfs.dim() == inputs.x.dim() + 1:
                cfs = cfs[:, 0]
            votes = _committee_votes(zoo, cfs)
            row = AblationRow(
                setting=setting,
                classifier=name,
                n=len(inputs),
                ta=float((zoo.logits(name, cfs).argmax(1) == inputs.target).float().mean()),
                ota=float((votes == inputs.target).float().mean()),
                oracle_changed=float((votes != before).float().mean()),
                kept=float(valid.float().mean()),
                l1=float((cfs - inputs.x).abs().mean()),
                seconds_per_input=seconds / len(inputs),
            )
            rows.append(row)
            if log is not None:
                log(
                    f"{setting:>14} {name:>10}: TA {row.ta:.2f} OTA {row.ota:.2f} changed {row.oracle_changed:.2f} "
                    f"kept {row.kept:.2f} L1 {row.l1:.3f} ({row.seconds_per_input:.3f} s/input)"
                )
    return rows


def hypotheses_table(
    domain: Any,
    zoo: Any,
    n_per_source: int,
    seed: int,
    *,
    log: Callable[[str], None] | None = None,
) -> dict[tuple[str, str], AblationRow]:
    """The cells Väth et al.'s hypotheses H1–H5 are asserted on, for one seed.

    The inputs (both pair sets) and every call's generator follow ``seed``. Settings on ideal pairs:
    ``base`` for the non-robust classifiers, ``robust_cnn`` and ``random_net``; ``no_cone`` for the
    non-robust ones and ``random_net`` (for ``robust_cnn`` the cone around its own gradient contains it,
    so ``no_cone`` equals ``base`` by construction); ``no_x0`` for ``cnn`` and ``noise_cnn`` (H4 contrasts
    them); ``other``: ``base`` on other pairs for the non-robust ones. DVCE runs with its class
    defaults (guidance scale 1.0).

    Returns:
        (setting, classifier) → :class:`AblationRow`.
    """
    from cfcheck.kinds.vce.methods.dvce import DiffusionCounterfactual

    base = DiffusionCounterfactual(zoo[domain.model_roles["diffusion"][0]], zoo[domain.model_roles["robust"][0]])
    ideal = ablation_inputs(domain, zoo, "ideal", n_per_source, seed=seed)
    other = ablation_inputs(domain, zoo, "other", n_per_source, seed=seed)
    with torch.random.fork_rng():
        rows = ablation_table(
            {"base": lambda: base}, (*NON_ROBUST, "robust_cnn", "random_net"), domain, zoo, ideal, seed=seed, log=log
        )
        rows += ablation_table(
            {"no_cone": lambda: dataclasses.replace(base, cone_projection=False)},
            (*NON_ROBUST, "random_net"),
            domain,
            zoo,
            ideal,
            seed=seed,
            log=log,
        )
        rows += ablation_table(
            {"no_x0": lambda: dataclasses.replace(base, x0_prediction=False)},
            ("cnn", "noise_cnn"),
            domain,
            zoo,
            ideal,
            seed=seed,
            log=log,
        )
        rows += ablation_table({"other": lambda: base}, NON_ROBUST, domain, zoo, other, seed=seed, log=log)
    return {(r.setting, r.classifier): r for r in rows}
