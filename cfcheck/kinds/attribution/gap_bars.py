"""Where the attribution kind's removal-gap bars sit, given what the controls measured (the rule of
:mod:`cfcheck.kinds.attribution.calibration`, which measures them): the noise ladder's resolved rungs,
then halfway between the worst positive and the best negative value over every seed, or no bar and
why. Pure: values in, bars and rationales out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfcheck.core.thresholds import Bar

__all__ = ["CALIBRATED", "derive_gap_bars", "gap_key"]

#: the scores the attribution calibration gives bars to: (strategy, order) of a gap
CALIBRATED = (("road", "morf"), ("road", "lerf"), ("roar", "morf"), ("roar", "lerf"), ("goar", "morf"))


def gap_key(strategy: str, order: str) -> str:
    """The key of a gap score (``road_gap:morf``, ``goar_gap``): the key the suite records it under
    (:func:`~cfcheck.kinds.attribution.removal.removal_key`), as the domain's bars and values files hold it."""
    from cfcheck.kinds.attribution.removal import removal_key

    return str(removal_key(strategy, "gap", order))


def derive_gap_bars(
    values: Mapping[str, Mapping[str, Mapping[int, float]]],
    roles: Mapping[str, str],
    domain: str,
    profile: str,
    seeds: Sequence[int] = (),
) -> dict[str, tuple[Bar | None, str]]:
    """Score key (``road_gap:morf``, ``goar_gap``) → (bar or None, rationale), from score → control → seed → gap.

    Args:
        values: mean gap of each control on each seed, per score key.
        roles: control → "+", "-" or "ladder:<ratio>".
        seeds: the seeds every score must have been measured on (a score measured on fewer keeps no bar).

    The ladder measures the score's **resolution**: its rungs, from the least noise up, count as
    positive controls while they clear every negative value on every seed; the first rung that
    does not is where the score can no longer tell the attribution from random, and it and the
    noisier rungs are neither positive nor negative. A bar needs at least one resolved rung, a
    ladder that falls strictly over the resolved rungs and the first unresolved one on every seed,
    and every "+" control above every negative; it sits halfway between the worst positive and the
    best negative. The rationale quotes the negatives' spread (every negative control on every
    seed: where the retraining seed follows the run's, each seed is another retraining draw), the
    resolution and the margin the bar keeps above the best negative.
    """
    bars: dict[str, tuple[Bar | None, str]] = {}
    ladder = sorted(
        (float(role.split(":", 1)[1]), control) for control, role in roles.items() if role.startswith("ladder:")
    )
    for key, by_control in sorted(values.items()):
        measured = sorted({seed for per_seed in by_control.values() for seed in per_seed})
        on_seeds = f"seed{'s' * (len(measured) > 1)} {', '.join(map(str, measured))}"
        negatives = [(c, v) for c, r in roles.items() if r == "-" for v in by_control.get(c, {}).values()]
        rungs = [(ratio, control) for ratio, control in ladder if by_control.get(control)]
        references = [(c, v) for c, r in roles.items() if r == "+" for v in by_control.get(c, {}).values()]
        if not (references or rungs) or not negatives:
            bars[key] = (None, "no positive or no negative control was measured")
            continue
        neg_control, neg = max(negatives, key=lambda cv: cv[1])
        resolved = 0  # the rungs that clear every negative on every seed, from the least noisy up
        while resolved < len(rungs) and min(by_control[rungs[resolved][1]].values()) > neg:
            resolved += 1
        falling = rungs[: resolved + 1]
        for seed in measured:
            seen = [(ratio, by_control[control][seed]) for ratio, control in falling if seed in by_control[control]]
            if any(a <= b for (_, a), (_, b) in zip(seen, seen[1:])):
                quoted = ", ".join(f"{r:g}: {v:+.3f}" for r, v in seen)
                bars[key] = (
                    None,
                    f"the noisy ladder does not fall as the noise grows on seed {seed} ({quoted}) "
                    f"on domain {domain!r}: the score does not track how much signal is left",
                )
                break
        if key in bars:
            continue
        if rungs and not resolved:
            ratio, control = rungs[0]
            bars[key] = (
                None,
                f"the controls overlap: {control}, the least noisy rung of the ladder, reaches "
                f"{min(by_control[control].values()):+.4g} at worst, {neg_control} {neg:+.4g} at "
                f"best, over {on_seeds} on domain {domain!r} ({profile} profile): the score does "
                f"not tell an attribution with noise {ratio:g}× its norm from random",
            )
            continue
        positives = references + [(c, v) for _, c in rungs[:resolved] for v in by_control[c].values()]
        pos_control, pos = min(positives, key=lambda cv: cv[1])
        low = min(v for _, v in negatives)
        n_neg = len({c for c, _ in negatives})
        spread = (
            f"the {len(negatives)} negative value{'s' * (len(negatives) > 1)} ({n_neg} random "
            f"attribution{'s' * (n_neg > 1)} on {on_seeds}) span {low:+.4g} to {neg:+.4g}"
        )
        resolution = ""
        if resolved < len(rungs):
            beyond = ", ".join(
                f"{ratio:g}× (worst {min(by_control[c].values()):+.4g})" for ratio, c in rungs[resolved:]
            )
            resolution = (
                f"; the score resolves noise up to {rungs[resolved - 1][0]:g}× the signal's norm: the "
                f"noisier rungs, {beyond}, do not clear every negative and count as neither"
            )
        quoted = (
            f"{pos_control} (better than random by construction) reaches {pos:+.4g} at worst, {neg_control} "
            f"{neg:+.4g} at best, over {on_seeds} on domain {domain!r} ({profile} "
            f"profile); {spread}{resolution}"
        )
        missing = sorted(set(seeds) - set(measured))
        if pos > neg and missing:  # the seeds measured do not rule a bar out; the others might
            bars[key] = (
                None,
                f"measured on {on_seeds} only "
                f"(not on {', '.join(map(str, missing))}): a bar needs every one of seeds "
                f"{', '.join(map(str, seeds))}; so far {quoted}",
            )
        elif pos > neg:
            bound = (pos + neg) / 2
            bars[key] = (
                Bar(bound, "min"),
                f"halfway: {quoted}; the bar keeps {bound - neg:.4g} above the best "
                f"negative ({(bound - neg) / max(neg - low, 1e-12):.2g}× their spread)",
            )
        else:
            bars[key] = (None, f"the controls overlap: {quoted}")
    return bars
