"""Melistas et al. 2024's MorphoMNIST findings on the three bundled SCM generators (VAE, HVAE, GAN).

The paper finds (§4.1–4.2, Tables 1 and 3): the HVAE has the best composition at 1 and 10 cycles and
the GAN the worst; the HVAE is the most effective in the majority of the nine intervention scenarios
(each parent read by its anti-causal predictor under do(thickness), do(intensity), do(digit));
intervening on thickness keeps the intensity error low, through the intensity mechanism.

Each test states whether the finding reproduces on morpho with the bundled (scaled-down) models;
where it does not, it asserts the ordering that was measured, so a retrained model that changes
the picture fails here and the table in docs/findings/scm.md must be revisited. The scoring functions are the
suites' own (:func:`cfcheck.kinds.scm.effectiveness.predictor_agreement`), on 60 test images and
one seeded draw of interventions per seed (seeds 0, 1 and 2: other images, other interventions),
without the suites' engine (seconds instead of minutes). A finding that holds on some seeds only is
asserted per seed, as measured.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scm-findings")]

N = 60
#: generator -> (its image mechanism: a model of morpho's role scm_image_mechanisms, abduct the pixel noise)
GENERATORS = {
    "vae": ("cvae", True),
    "hvae": ("chvae", True),
    "gan": ("cgan", False),
    "vae_mean": ("cvae", False),
    "hvae_mean": ("chvae", False),
}


#: seeds: seed s scores test images s·N … (s + 1)·N − 1 under interventions drawn from seed s
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def by_seed() -> dict[int, dict[str, dict]]:
    """seed -> :func:`measure` of that seed."""
    return {seed: measure(seed) for seed in SEEDS}


@pytest.fixture(scope="module")
def measured(by_seed) -> dict[str, dict]:
    """Seed 0's measurements (the numbers the docstrings quote)."""
    return by_seed[0]


def measure(seed: int) -> dict[str, dict]:
    """generator -> {"composition": {1: L1, 10: L1}, "effectiveness": {(parent, do): (kind, value)}}."""
    from cfcheck.domains import get_domain
    from cfcheck.kinds.scm.effectiveness import predictor_agreement
    from cfcheck.kinds.scm.methods.vae import SCMVAE
    from cfcheck.models.zoo import MethodModels, ModelZoo

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        domain = get_domain("morpho")
        zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
        models = MethodModels(zoo)
        mechanisms = domain.attribute_mechanisms(models)
        scored = domain.split_roles["scored"]
        index = torch.arange(seed * N, (seed + 1) * N)
        x = domain.split(scored, (seed + 1) * N).images[index]
        parents = domain.parents(scored, index)
        generator = torch.Generator().manual_seed(seed)
        interventions = {f: {f: domain.sample_intervention(f, parents, generator)} for f in domain.factor_names}
        targets = {f: domain.counterfactual_parents(scored, index, iv) for f, iv in interventions.items()}
        found: dict[str, dict] = {}
        for name, (mechanism, noise) in GENERATORS.items():
            assert mechanism in domain.model_roles["scm_image_mechanisms"]
            method = SCMVAE(vae=models[mechanism], mechanisms=mechanisms, abduct_pixel_noise=noise)
            composition, y = {}, x
            for m in range(1, 11):
                y = method.counterfactual(y, parents, {"thickness": parents["thickness"].clone()})
                if m in (1, 10):
                    composition[m] = float((y - x).abs().mean())
            effectiveness = {}
            for do, intervention in interventions.items():
                x_cf = method.counterfactual(x, parents, intervention)
                result = SimpleNamespace(
                    domain=domain, valid=torch.ones(N, dtype=torch.bool), target_parents=targets[do], x_cf=x_cf
                )
                for parent in domain.factor_names:
                    kind, values = predictor_agreement(result, zoo, parent)
                    effectiveness[(parent, do)] = (kind, float(values.double().mean()))
            found[name] = {"composition": composition, "effectiveness": effectiveness}
        return found
    finally:
        torch.set_num_threads(previous)


def _mean_decoders_by_composition(measured: dict, cycles: int) -> list[str]:
    names = ("vae_mean", "hvae_mean", "gan")
    return sorted(names, key=lambda n: measured[n]["composition"][cycles])


@pytest.mark.parametrize("cycles", [1, 10])
def test_composition_hvae_best_gan_worst(by_seed, cycles):
    """With the pixel noise abducted, the VAE and the HVAE both return the input exactly (composition is
    perfect by construction: a tie, not an ordering). Decoding the mean instead (the reconstruction
    is what the cycles accumulate, as in Melistas et al.'s Table 1), the HVAE is not the best on any seed:
    the VAE is, since both VAEs were counterfactually fine-tuned. At m = 1 the GAN is the worst on every
    seed, as in the paper (seed 0: pixel L1 VAE 0.0215 < HVAE 0.0217 < GAN 0.0255). At m = 10 "GAN
    worst" is seed-dependent: seed 0 0.0485 < 0.0563 < GAN 0.0565, but the HVAE is worst at seeds 1 (VAE
    0.0437, GAN 0.0516, HVAE 0.0540) and 2 (0.0437, GAN 0.05346, HVAE 0.05350): the two are within 0.0025."""
    worst = {seed: _mean_decoders_by_composition(measured, cycles)[-1] for seed, measured in by_seed.items()}
    for seed, measured in by_seed.items():
        for name in ("vae", "hvae"):
            assert measured[name]["composition"][cycles] < 1e-3, (seed, name, measured[name]["composition"])
        assert _mean_decoders_by_composition(measured, cycles)[0] == "vae_mean", (seed, measured)
    expected = {0: "gan", 1: "gan", 2: "gan"} if cycles == 1 else {0: "gan", 1: "hvae_mean", 2: "hvae_mean"}
    assert worst == expected, {
        seed: {n: m[n]["composition"] for n in ("vae_mean", "hvae_mean", "gan")} for seed, m in by_seed.items()
    }


def _scenario_outcomes(measured: dict) -> dict[tuple[str, str], tuple[str, str, dict[str, float]]]:
    """scenario (parent read, intervened parent) -> (best, worst, values) over VAE, HVAE and GAN."""
    outcomes = {}
    for scenario, (kind, _) in measured["hvae"]["effectiveness"].items():
        values = {n: measured[n]["effectiveness"][scenario][1] for n in ("vae", "hvae", "gan")}
        best = max(values, key=values.get) if kind == "accuracy" else min(values, key=values.get)
        worst = min(values, key=values.get) if kind == "accuracy" else max(values, key=values.get)
        outcomes[scenario] = (best, worst, values)
    return outcomes


def _hvae_wins(outcomes: dict) -> set[tuple[str, str]]:
    """Scenarios the HVAE wins outright (a tie with the VAE is no win)."""
    return {
        scenario
        for scenario, (best, _, values) in outcomes.items()
        if best == "hvae" and values["hvae"] != values["vae"]
    }


def _gan_last(outcomes: dict) -> set[tuple[str, str]]:
    """Scenarios the GAN alone is last in."""
    return {
        scenario
        for scenario, (_, worst, values) in outcomes.items()
        if worst == "gan" and list(values.values()).count(values["gan"]) == 1
    }


def test_hvae_most_effective_in_the_majority_of_scenarios(by_seed):
    """Of the nine scenarios (parent read by its predictor × intervened parent), the best of the three
    generators (lowest error, highest digit accuracy; a tie is no win for the HVAE). Does not reproduce on
    any seed since the VAE, too, is counterfactually fine-tuned: the HVAE wins 2, 3 and 2 of 9 at seeds 0,
    1 and 2, always thickness and intensity under do(intensity) (seed 0: 0.210 vs VAE 0.262 sd, 0.190 vs
    0.226), at seed 1 thickness under do(thickness) too. The GAN is alone last in 7, 6 and 6 of 9. Seed
    0 in detail: the VAE wins the other scenarios but one (digit under do(thickness), a three-way tie at
    1.000), by 0.0002-0.06 (digit under do(digit) 0.983 vs 0.933), and under do(digit) the GAN's digit
    accuracy (0.950) is above the HVAE's (0.933)."""
    outcomes = {seed: _scenario_outcomes(measured) for seed, measured in by_seed.items()}
    under_intensity = {("thickness", "intensity"), ("intensity", "intensity")}
    wins = {seed: _hvae_wins(found) for seed, found in outcomes.items()}
    assert wins == {0: under_intensity, 1: under_intensity | {("thickness", "thickness")}, 2: under_intensity}, outcomes
    assert {seed: len(_gan_last(found)) for seed, found in outcomes.items()} == {0: 7, 1: 6, 2: 6}, outcomes
    seed0 = outcomes[0]
    assert _gan_last(seed0) == set(seed0) - {("digit", "thickness"), ("digit", "digit")}, seed0
    assert seed0[("digit", "thickness")][2] == {"vae": 1.0, "hvae": 1.0, "gan": 1.0}, seed0
    assert seed0[("digit", "digit")][1] == "hvae", seed0


def test_do_thickness_keeps_the_intensity_error_low(by_seed):
    """Is the intensity error under do(thickness), which moves the intensity through the intensity flow,
    the lowest of the three interventions (Melistas et al.'s Table 3 pattern)? For the VAE on every seed
    (0.121, 0.118, 0.113 sd at seeds 0, 1, 2). For the HVAE at seed 0 only (0.125 against 0.190 under
    do(intensity) and 0.159 under do(digit)); at seeds 1 and 2 do(intensity) is lower (0.099 and 0.133
    against 0.136 and 0.138): seed-dependent. Not for the GAN on any seed since its counterfactual
    fine-tuning: lowest under do(digit) (seed 0: 0.179 against 0.198 under do(thickness)), highest under
    do(intensity) (0.378; before the fine-tuning 0.430, 0.911, 0.446)."""
    lowest = {}
    for seed, measured in by_seed.items():
        for name in ("vae", "hvae", "gan"):
            errors = {
                do: measured[name]["effectiveness"][("intensity", do)][1] for do in ("thickness", "intensity", "digit")
            }
            lowest[seed, name] = sorted(errors, key=errors.get)[0]
            if name == "gan":
                assert sorted(errors, key=errors.get) == ["digit", "thickness", "intensity"], (seed, errors)
    assert lowest == {
        (0, "vae"): "thickness",
        (1, "vae"): "thickness",
        (2, "vae"): "thickness",
        (0, "hvae"): "thickness",
        (1, "hvae"): "intensity",
        (2, "hvae"): "intensity",
        (0, "gan"): "digit",
        (1, "gan"): "digit",
        (2, "gan"): "digit",
    }, lowest
