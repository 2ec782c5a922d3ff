"""Phrases shared by several cards."""

IMAGES = "images float32 in [0,1], N×C×H×W (morpho: N×1×32×32)"
EXCLUDED = "excluded; coverage reported"
FAILURE0 = "counted as failures (0)"
VAETH_31 = "Väth et al. 2023, Diffusion-based VCE evaluation, §3.1"
HVILSHOJ = "Hvilshøj et al. 2021, Quantitative evaluations of counterfactuals"
EMBED = "embeddings from the bundled domain embedding network (Hvilshøj §3.1: FID on a domain network)"
F_PRED = f"predicted labels (argmax) of the explained classifier f; {IMAGES}"
O_PRED = f"predicted labels of the oracle f_o, never the explained classifier; {IMAGES}"
EXPLAINED_ARCHITECTURES = (
    "the explained classifiers are small_cnn (cnn, robust_cnn, noise_cnn, random_net) and mlp"
)
