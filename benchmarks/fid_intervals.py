"""Coverage and width of candidate FID (and KID) intervals in the realism-interval simulation.

The simulation of ``tests/metrics/test_realism_intervals.py``: real morpho embeddings stand in for
the counterfactuals (12 per class, drawn from one half of the reference split), the reference is
drawn from the other half by ``score_realism``; the expected score is the mean over fresh draws
of both. Each candidate interval (200 resamples) is computed on the same trials, and the table
gives how many hold the expected score and their mean width over the central 95% of the draws.

    python benchmarks/fid_intervals.py [--trials 40] [--draws 200] [--metric fid]

Candidates: every ``bootstrap_set_ci`` method as ``score_realism`` runs it, and two that were
tried and are not in cfcheck: a bootstrap of the counterfactuals only (reference held fixed) and
a two-size extrapolation (half- and quarter-samples, fitting a/m + b/m² to their variances).
A setting took 1–3.5 minutes (wall clock, one thread, a shared two-core machine) for three intervals.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from cfcheck.core.seeds import Stream, seeded
from cfcheck.domains import get_domain
from cfcheck.metrics.realism import fid
from cfcheck.metrics.reference_sets import _with_engine, draw_reference, score_realism
from cfcheck.metrics.set_intervals import SET_CI_METHODS
from cfcheck.metrics.set_statistics import FidSets, KidSets, kid_all_pairs
from cfcheck.models.zoo import ModelZoo

PER_CLASS = 12
RESAMPLES = 200
STATISTICS = {"fid": (fid, FidSets), "kid": (kid_all_pairs, KidSets)}
TRIED = ("fakes_only_bootstrap", "two_size")
#: (conditional, mean shift, covariance factor): the test's settings and a narrower covariance
SETTINGS = [
    (True, 0.0, 1.0),
    (False, 0.0, 1.0),
    (False, 1.5, 1.0),
    (False, 0.0, 1.3),
    (True, 0.0, 1.3),
    (True, 1.5, 1.0),
    (False, 0.0, 0.77),
    (True, 0.0, 0.77),
]

#: the draws of the simulated fakes from a repetition's seed
FAKES = Stream("simulated fakes", start=100_000)


def _fakes(halves, seed, shift, factor):
    (_, _), (source, source_labels) = halves
    picker = torch.Generator().manual_seed(seeded(seed, FAKES))
    parts = []
    for k in range(10):
        rows = torch.nonzero(source_labels == k).flatten()
        parts.append(source[rows[torch.randperm(len(rows), generator=picker)[:PER_CLASS]]])
    return torch.cat(parts) * factor + shift, torch.arange(10).repeat_interleave(PER_CLASS)


def _score(halves, statistic, seed, conditional, shift, factor, resamples=1, method="bootstrap"):
    fakes, classes = _fakes(halves, seed, shift, factor)
    (reference, reference_labels), _ = halves
    return score_realism(
        statistic,
        reference,
        reference_labels,
        fakes,
        classes,
        conditional=conditional,
        generator=torch.Generator().manual_seed(seed),
        n_resamples=resamples,
        seed=seed,
        ci_method=method,
    )


def _rows(parts, fraction, rng):
    out = []
    for p in parts:
        keep = min(len(p), max(2, round(len(p) * fraction)))
        out.append(rng.permuted(np.broadcast_to(np.arange(len(p)), (RESAMPLES, len(p))), axis=1)[:, :keep])
    return out


def _tried(halves, engine, seed, conditional, shift, factor):
    """The two candidates outside cfcheck, on score_realism's sets of this trial."""
    fakes, classes = _fakes(halves, seed, shift, factor)
    (pool, pool_labels), _ = halves
    draw = draw_reference(
        pool_labels, dict.fromkeys(range(10), PER_CLASS), generator=torch.Generator().manual_seed(seed)
    )
    reference = [pool[draw.reference[c]] for c in range(10)]
    fake_parts = [fakes[classes == c] for c in range(10)]
    value, _, resampled = _with_engine(engine, reference, fake_parts, [], np.full(10, 0.1), conditional)
    rng = np.random.default_rng(seed)
    fixed = tuple(np.broadcast_to(np.arange(len(r)), (RESAMPLES, len(r))) for r in reference)
    stats = resampled(fixed, tuple(rng.integers(0, len(f), size=(RESAMPLES, len(f))) for f in fake_parts))
    low, high = np.percentile(stats, [2.5, 97.5]) - (np.median(stats) - value)
    out = {"fakes_only_bootstrap": (low, high)}
    sizes = [len(p) for p in reference + fake_parts]
    variances, fractions, half = [], [], None
    for fraction in (0.5, 0.25):
        index = _rows(reference + fake_parts, fraction, rng)
        s = resampled(tuple(index[:10]), tuple(index[10:]))
        half = s if half is None else half
        variances.append(np.var(s, ddof=1))
        fractions.append(sum(i.shape[1] for i in index) / sum(sizes))
    # Var(T_f | sample) = a (1/f − 1) + b (1/f² − 1); Var(T_1) = a + b
    a, b = np.linalg.solve([[1 / f - 1, 1 / f**2 - 1] for f in fractions], variances)
    a, b = (
        (variances[0] / (1 / fractions[0] - 1), 0.0)
        if b < 0
        else ((0.0, variances[0] / (1 / fractions[0] ** 2 - 1)) if a < 0 else (a, b))
    )
    scale = np.sqrt((a + b) / variances[0] * fractions[0] / (1 - fractions[0]))
    low, high = np.percentile(half, [2.5, 97.5])
    middle = np.median(half)
    out["two_size"] = (value - scale * (high - middle), value - scale * (low - middle))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--metric", choices=sorted(STATISTICS), default="fid")
    parser.add_argument("--settings", type=int, nargs="*", help="indices into SETTINGS (default: all)")
    parser.add_argument(
        "--intervals",
        nargs="*",
        default=[*SET_CI_METHODS, *TRIED],
        help=f"which intervals (default: all): {', '.join([*SET_CI_METHODS, *TRIED])}",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    features, labels = ModelZoo(get_domain("morpho"), torch.device("cpu")).realism_pool
    halves = (features[0::2], labels[0::2]), (features[1::2], labels[1::2])
    direction = torch.from_numpy(np.random.default_rng(0).normal(size=features.shape[1])).float()
    statistic, engine = STATISTICS[args.metric]
    print(f"{args.trials} trials, {args.draws} fresh draws, {RESAMPLES} resamples, {PER_CLASS} per class")
    print(
        "| setting | interval | covered | mean width / draws' spread | inside the bootstrap's | low end below, "
        "high end above the bootstrap's |\n|---|---|---|---|---|---|"
    )
    for index in args.settings if args.settings is not None else range(len(SETTINGS)):
        conditional, shift_size, factor = SETTINGS[index]
        started = time.time()
        shift = shift_size * direction / direction.norm()
        draws = np.array(
            [_score(halves, statistic, s, conditional, shift, factor).value for s in range(10_000, 10_000 + args.draws)]
        )
        expected, spread = draws.mean(), np.subtract(*np.percentile(draws, [97.5, 2.5]))
        intervals: dict[str, list[tuple[float, float]]] = {}
        for t in range(args.trials):
            for method in SET_CI_METHODS:
                if method in args.intervals:
                    ci = _score(halves, statistic, t, conditional, shift, factor, RESAMPLES, method).ci
                    intervals.setdefault(method, []).append(ci)
            if set(TRIED) & set(args.intervals):
                for name, ci in _tried(halves, engine, t, conditional, shift, factor).items():
                    if name in args.intervals:
                        intervals.setdefault(name, []).append(ci)
        name = f"{args.metric}_{'target' if conditional else 'domain'} (shift {shift_size}, × {factor})"
        for method, cis in intervals.items():
            cis = np.array(cis)
            covered = int(((cis[:, 0] <= expected) & (expected <= cis[:, 1])).sum())
            width = float((cis[:, 1] - cis[:, 0]).mean() / spread)
            nested = ""
            if "bootstrap" in intervals and method != "bootstrap":  # inside today's interval: verdicts only decide
                old = np.array(intervals["bootstrap"])
                nested = f" | {int(((cis[:, 0] >= old[:, 0]) & (cis[:, 1] <= old[:, 1])).sum())}/{len(cis)}"
                nested += f" | {int((cis[:, 0] < old[:, 0]).sum())}, {int((cis[:, 1] > old[:, 1]).sum())}"
            print(f"| {name} | {method} | {covered}/{len(cis)} | {width:.2f}{nested} |", flush=True)
        print(
            f"<!-- {name}: expected {expected:.4g}, spread {spread:.4g}, {time.time() - started:.0f} s -->", flush=True
        )


if __name__ == "__main__":
    main()
