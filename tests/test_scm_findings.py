"""Melistas et al. 2024's MorphoMNIST findings on the three bundled SCM generators (VAE, HVAE, GAN).

The paper finds (§4.1–4.2, Tables 1 and 3): the HVAE has the best composition at 1 and 10 cycles and
the GAN the worst; the HVAE is the most effective in the majority of the nine intervention scenarios
(each parent read by its anti-causal predictor under do(thickness), do(intensity), do(digit));
intervening on thickness keeps the intensity error low, through the intensity mechanism.

Each test states whether the finding reproduces on morpho with the bundled (scaled-down) models;
where it does not, it asserts the ordering that was measured, so a retrained model that changes
the picture fails here and the README's table must be revisited. The scoring functions are the
suites' own (:func:`cfcheck.kinds.scm.effectiveness.predictor_agreement`), on 60 test images and
one seeded draw of interventions, without the suites' engine (seconds instead of minutes).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scm-findings")]

N = 60
#: generator -> (its image mechanism: a model of morpho's role scm_image_mechanisms, abduct the pixel noise)
GENERATORS = {"vae": ("cvae", True), "hvae": ("chvae", True), "gan": ("cgan", False),
              "vae_mean": ("cvae", False), "hvae_mean": ("chvae", False)}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict]:
    """generator -> {"composition": {1: L1, 10: L1}, "effectiveness": {(parent, do): (kind, value)}}."""
    from cfcheck.domains import get_domain
    from cfcheck.kinds.scm.effectiveness import predictor_agreement
    from cfcheck.methods.scm_vae import SCMVAE
    from cfcheck.zoo import MethodModels, ModelZoo

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        domain = get_domain("morpho")
        zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
        models = MethodModels(zoo)
        mechanisms = domain.attribute_mechanisms(models)
        scored = domain.split_roles["scored"]
        index = torch.arange(N)
        x = domain.split(scored, N).images
        parents = domain.parents(scored, index)
        generator = torch.Generator().manual_seed(0)
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
                result = SimpleNamespace(domain=domain, valid=torch.ones(N, dtype=torch.bool),
                                         target_parents=targets[do], x_cf=x_cf)
                for parent in domain.factor_names:
                    kind, values = predictor_agreement(result, zoo, parent)
                    effectiveness[(parent, do)] = (kind, float(values.double().mean()))
            found[name] = {"composition": composition, "effectiveness": effectiveness}
        return found
    finally:
        torch.set_num_threads(previous)


@pytest.mark.parametrize("cycles", [1, 10])
def test_composition_hvae_best_gan_worst(measured, cycles):
    """With the pixel noise abducted, the VAE and the HVAE both return the input exactly (composition is
    perfect by construction: a tie, not an ordering). Decoding the mean instead (the reconstruction
    is what the cycles accumulate, as in Melistas et al.'s Table 1), the GAN is the worst, as in the paper,
    but since both VAEs were counterfactually fine-tuned the HVAE is no longer the best: pixel L1 VAE
    0.0215 < HVAE 0.0217 < GAN 0.0255 at m = 1, 0.0485 < 0.0563 < 0.0565 at m = 10 (at m = 10 the GAN is
    worst by 0.0002 only since its counterfactual fine-tuning; before it: GAN 0.0691 and 0.0944; before the
    fine-tuning of the VAE and the longer one of the HVAE: HVAE 0.0167 < VAE 0.0214 at m = 1)."""
    for name in ("vae", "hvae"):
        assert measured[name]["composition"][cycles] < 1e-3, (name, measured[name]["composition"])
    names = ("vae_mean", "hvae_mean", "gan")
    order = sorted(names, key=lambda n: measured[n]["composition"][cycles])
    assert order == ["vae_mean", "hvae_mean", "gan"], {n: measured[n]["composition"] for n in names}


def test_hvae_most_effective_in_the_majority_of_scenarios(measured):
    """Of the nine scenarios (parent read by its predictor × intervened parent), the best of the three
    generators (lowest error, highest digit accuracy; a tie is no win for the HVAE). Does not reproduce
    since the VAE, too, is counterfactually fine-tuned: the HVAE wins 2 of 9 (thickness and intensity under
    do(intensity): 0.210 vs VAE 0.262 sd, 0.190 vs 0.226), the VAE the other six but one (digit under
    do(thickness), a tie at 1.000), by 0.0002-0.06 (digit under do(digit) 0.983 vs 0.933). The GAN is last
    in seven (it was last in every scenario before its counterfactual fine-tuning): digit under do(thickness)
    is a three-way tie at 1.000, and under do(digit) the GAN reads 0.950, above the HVAE's 0.933."""
    wins = {}
    for scenario, (kind, _) in measured["hvae"]["effectiveness"].items():
        values = {n: measured[n]["effectiveness"][scenario][1] for n in ("vae", "hvae", "gan")}
        best = max(values, key=values.get) if kind == "accuracy" else min(values, key=values.get)
        worst = min(values, key=values.get) if kind == "accuracy" else max(values, key=values.get)
        wins[scenario] = (best, worst, values)
    hvae_wins = {scenario for scenario, (best, _, values) in wins.items()
                 if best == "hvae" and values["hvae"] != values["vae"]}
    assert hvae_wins == {("thickness", "intensity"), ("intensity", "intensity")}, wins
    gan_last = {scenario for scenario, (_, worst, values) in wins.items()
                if worst == "gan" and list(values.values()).count(values["gan"]) == 1}
    assert gan_last == set(wins) - {("digit", "thickness"), ("digit", "digit")}, wins
    assert wins[("digit", "thickness")][2] == {"vae": 1.0, "hvae": 1.0, "gan": 1.0}, wins
    assert wins[("digit", "digit")][1] == "hvae", wins


def test_do_thickness_keeps_the_intensity_error_low(measured):
    """The intensity error under do(thickness), which moves the intensity through the intensity flow, is the
    lowest of the three interventions (Melistas et al.'s Table 3 pattern). Reproduces for the VAE, 0.121 sd
    (do(intensity) 0.226, do(digit) 0.158), and the HVAE, 0.125 (0.190, 0.159). No longer for the GAN since its
    counterfactual fine-tuning: 0.198 under do(thickness), 0.378 under do(intensity), 0.179 under do(digit)
    (before it: 0.430, 0.911, 0.446); its do(intensity) error is still the highest."""
    for name in ("vae", "hvae", "gan"):
        errors = {do: measured[name]["effectiveness"][("intensity", do)][1]
                  for do in ("thickness", "intensity", "digit")}
        expected = ["digit", "thickness", "intensity"] if name == "gan" else ["thickness"]
        assert sorted(errors, key=errors.get)[:len(expected)] == expected, (name, errors)
