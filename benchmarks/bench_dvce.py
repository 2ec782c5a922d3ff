"""Väth et al.'s ablations of DVCE (and FastDiME, Wachter for reference) on morpho, full size.

Run:  python benchmarks/bench_dvce.py [--n-per-source 12] [--steps 40] [--threads 1] [--seed 0]
                                      [--classifiers cnn,mlp,noise_cnn,robust_cnn,random_net]

Prints one line per (setting, classifier): target accuracy TA, committee OTA, the share of
inputs whose committee vote changed, the share kept by the rejection step, mean L1 and seconds
per counterfactual; then the same as a Markdown table for README. Settings: ``base`` (all
DVCE switches on), ``no_cone``, ``no_x0``, ``no_rejection`` on ideal pairs; ``base`` on other
pairs (H5); ``fastdime`` and ``wachter`` on ideal pairs. See reproductions/vce_ablation.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import torch

from cfcheck.domains import get_domain
from cfcheck.kinds.vce.methods.dvce import DiffusionCounterfactual
from cfcheck.kinds.vce.methods.fastdime import FastDiME
from cfcheck.kinds.vce.methods.wachter import WachterCounterfactual
from cfcheck.models.zoo import ModelZoo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # reproductions/ sits at the repository's root
from reproductions.vce_ablation import ablation_inputs, ablation_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-per-source", type=int, default=12)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="draws the inputs and seeds every call's generator")
    parser.add_argument("--classifiers", default="cnn,mlp,noise_cnn,robust_cnn,random_net")
    parser.add_argument("--settings", default="base,no_cone,no_x0,no_rejection,other,fastdime,wachter")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    domain = get_domain("morpho")
    zoo = ModelZoo(get_domain("morpho"), torch.device("cpu"))
    diffusion, robust = zoo[domain.model_roles["diffusion"][0]], zoo[domain.model_roles["robust"][0]]
    base = DiffusionCounterfactual(diffusion, robust, num_steps=args.steps)
    variants = {
        "base": lambda: base,
        "no_cone": lambda: dataclasses.replace(base, cone_projection=False),
        "no_x0": lambda: dataclasses.replace(base, x0_prediction=False),
        "no_rejection": lambda: dataclasses.replace(base, rejection=False),
        "fastdime": lambda: FastDiME(diffusion, num_steps=args.steps),
        "wachter": lambda: WachterCounterfactual(),
    }
    wanted = args.settings.split(",")
    classifiers = args.classifiers.split(",")
    rows = []
    ideal = ablation_inputs(domain, zoo, "ideal", args.n_per_source, seed=args.seed)
    rows += ablation_table(
        {k: v for k, v in variants.items() if k in wanted}, classifiers, domain, zoo, ideal, seed=args.seed, log=print
    )
    if "other" in wanted:
        other = ablation_inputs(domain, zoo, "other", args.n_per_source, seed=args.seed)
        rows += ablation_table(
            {"base_other": variants["base"]}, classifiers, domain, zoo, other, seed=args.seed, log=print
        )
    print("\n| setting | classifier | TA | OTA | oracle vote changed | kept | L1 | s/CF |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r.setting} | {r.classifier} | {r.ta:.2f} | {r.ota:.2f} | {r.oracle_changed:.2f} | {r.kept:.2f} "
            f"| {r.l1:.3f} | {r.seconds_per_input:.3f} |"
        )


if __name__ == "__main__":
    main()
