"""Phrases shared by several cards."""

IMAGES = "images float32 in [0,1], N×C×H×W (e.g. N×1×32×32 for grey 32×32 images)"
EXCLUDED = "excluded; coverage reported"
FAILURE0 = "counted as failures (0)"
VAETH_31 = "Väth et al. 2023, Diffusion-based VCE evaluation, §3.1"
HVILSHOJ = "Hvilshøj et al. 2021, Quantitative evaluations of counterfactuals"
EMBED = "embeddings from the bundled domain embedding network (Hvilshøj §3.1: FID on a domain network)"
F_PRED = f"predicted labels (argmax) of the explained classifier f; {IMAGES}"
O_PRED = f"predicted labels of the oracle f_o, never the explained classifier; {IMAGES}"
EXPLAINED_ARCHITECTURES = "the explained classifiers are small_cnn (cnn, robust_cnn, noise_cnn, random_net) and mlp"
# -- shared by the SCM cards (scm.py, scm_models.py) --
SCM_IMAGES = "images in [0, 1]; errors in standard deviations of the parent"
SCM_ABSTAIN = "abstentions excluded (coverage is reported by the ground_truth suite)"
#: The command whose values the SCM cards' measured lines show (cfcheck.reporting.evidence).
SCM_RUN = "`cfcheck calibrate --methods scm_truth scm_identity scm_resample scm_noise`"
SCM_IDENTITY_KEEPS = (
    "scm_identity, expected to fail causal_graph, keeps every parent: it fails only on a parent "
    "the causal graph moves (a descendant of the intervened parent, whose mechanism it ignores) and "
    "passes on the parents the intervention leaves alone, where keeping the observed value is right; "
    "effectiveness is what fails it there"
)
