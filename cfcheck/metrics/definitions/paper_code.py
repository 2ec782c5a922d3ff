"""Where cfcheck's numbers differ from the ones the papers' own code computes, card by card.

Each entry was read in the paper's published code at the commit its :class:`PaperCode` names and
checked against cfcheck's function of the card (``computed_by``). :data:`PAPER_DIFFERENCES` maps a
card key to its differences; :mod:`cfcheck.metrics.definitions` attaches them to the cards, and
:mod:`cfcheck.reporting.papers_code` lists them on the page "cfcheck and the papers' code".
:data:`PAPER_CODES` holds every code that was read, including those with no difference recorded.
"""

from __future__ import annotations

from cfcheck.metrics.card import PaperCode, PaperDifference

__all__ = ["PAPER_CODES", "PAPER_DIFFERENCES"]

HVILSHOJ_CODE = PaperCode(
    "Hvilshøj et al. 2021",
    "https://github.com/fhvilshoj/EvaluatingCounterfactuals",
    "136fd5f7fca5c886082c0597d2fc581705113870",
)
VAETH_CODE = PaperCode(
    "Väth et al. 2023",
    "https://github.com/cairo-thws/DBVCE_eval",
    "4edbab5a2027d3746bd5f2d127bd68ab0a3bd519",
)
MELISTAS_CODE = PaperCode(
    "Melistas et al. 2024",
    "https://github.com/gulnazaki/counterfactual-benchmark",
    "581dbb495421ca863c4a6e62ad759ac79de076e9",
)
BEX_CODE = PaperCode(
    "Bex et al.",
    "PyPI: bex 0.5.2 (the benchmark's own package)",
    None,
    unchecked="read from the released wheel bex-0.5.2-py3-none-any.whl; its GitHub repository could not be fetched here",
)
ROAD_CODE = PaperCode(
    "Rong et al. 2022 (ROAD)",
    "https://github.com/tleemann/road_evaluation",
    "e6b9987ffbd79654125af2f581b5dae70e831b09",
)
PRDC_CODE = PaperCode(
    "Naeem et al. 2020 (density and coverage)",
    "https://github.com/clovaai/generative-evaluation-prdc",
    "e320c1d2811d33081361a08f595b43830b78641c",
)
TORCHMETRICS_KID = PaperCode(
    "Bińkowski et al. 2018 (KID), as torchmetrics computes it",
    "PyPI: torchmetrics 1.9.0 (torchmetrics/image/kid.py)",
    None,
    unchecked="read from the installed release 1.9.0, the version the comparison used; no commit of its repository was checked",
)

#: every code read, in the order of the page; ROAD's has no difference recorded
PAPER_CODES = (HVILSHOJ_CODE, VAETH_CODE, MELISTAS_CODE, BEX_CODE, PRDC_CODE, TORCHMETRICS_KID, ROAD_CODE)

# -- Hvilshøj et al.: LVS, the oracle score, IM1 / IM2 ------------------------------------------------

_LVS_NATS = PaperDifference(
    HVILSHOJ_CODE,
    "evaluate/metrics/lvs.py:20-33 (KL, JS)",
    "The paper's code takes the Jensen–Shannon divergence with the natural logarithm (nats, at most ln 2); "
    "cfcheck divides by ln 2 and reports bits, in [0, 1].",
    "multiply cfcheck's value by ln 2 ≈ 0.6931 to get nats (per image and so for the mean).",
)
_ORACLE_TARGET = PaperDifference(
    HVILSHOJ_CODE,
    "evaluate/metrics/oracle.py:20 and :28 (Oracle.score)",
    "The docstring defines the score as agreement of the oracle with the explained classifier on the "
    "counterfactual, 1[f(c) = o(c)], but the code compares the oracle's label with the requested target q "
    "(dataset/dataset.py:47 names the arguments), so it computes an oracle target accuracy over the "
    "counterfactuals it does not skip. cfcheck computes the documented agreement with f(c), over the "
    "counterfactuals that changed f's decision.",
    "none in general; where every kept counterfactual reaches its target (f(c) = q) the two coincide. The "
    "code's number is cfcheck's oracle_target_accuracy restricted to the counterfactuals it keeps.",
    bug=True,
)
_BLANK_SKIPPED = PaperDifference(
    HVILSHOJ_CODE,
    "evaluate/metrics/computer.py:20-21 (Computer._iterate)",
    "The paper's code drops failed counterfactuals and blank ones (mean equal to the data's minimum) before "
    "averaging every metric; cfcheck scores every counterfactual the method returns, blank or not, and "
    "excludes only abstentions.",
    "none from the mean: drop the blank counterfactuals and average again.",
)
_IM1_PREDICTED = PaperDifference(
    HVILSHOJ_CODE,
    "evaluate/metrics/im1.py:27 (IM1.score; its yhat is the prediction on x, dataset/dataset.py:47)",
    "The denominator's autoencoder is chosen by the class the classifier predicts for the input; cfcheck "
    "chooses it by the input's true class (the task's source class).",
    "none; the two agree on every input the explained classifier labels correctly.",
)
_IM_EPSILON = PaperDifference(
    HVILSHOJ_CODE,
    "evaluate/metrics/im1.py:8 and evaluate/metrics/im2.py:8 (epsilon=1e-5)",
    "The denominators add ε = 1e-5; cfcheck adds 1e-8. The results differ only where the denominator is "
    "tiny: for an all-zero counterfactual IM2 is ‖AE_q(0) − AE(0)‖² / ε, exactly 1000 times larger in "
    "cfcheck (the paper's code skips such an image altogether). So 'a blank image scores well' holds for "
    "faded images, not for an all-zero one.",
    "paper = cfcheck · (D + 1e-8) / (D + 1e-5), D = the per-image denominator (‖c − AE_p(c)‖² for IM1, "
    "‖c‖₁ for IM2); it needs D, not only the score.",
)

# -- Väth et al.: D_p and OA ------------------------------------------------------------------------------


def _batch_norm(p: str) -> PaperDifference:
    if p == "1":
        conversion = "Σ_i d_i over one run's n images, exactly n times cfcheck's D_1 (n · mean)."
    else:
        conversion = (
            f"(Σ_i d_i^{p})^(1/{p}) over cfcheck's per-image values d_i of one run's n images; the mean alone does "
            f"not give it (it is n^(1/{p}) · mean only when all d_i are equal)."
        )
    return PaperDifference(
        VAETH_CODE,
        "scripts/classifier_sample.py:347-348 (th.norm(sample - init_images, p=i))",
        f"The paper's code takes one L_{p} norm of the difference of the whole run's batch (all images of a "
        "source/target pair at once) and reports it as the run's value; cfcheck takes the norm of each image "
        "and averages over the images.",
        conversion,
    )


_OA_LABEL = PaperDifference(
    VAETH_CODE,
    "scripts/classifier_sample.py:335-336 (original_class_validity)",
    "The paper's code counts counterfactuals that the classifier assigns to the input's dataset label; "
    "cfcheck counts those it assigns to its own prediction on the input, f(x).",
    "none in general; the two agree on every input f classifies correctly.",
)

# -- Melistas et al.: composition, effectiveness, minimality ---------------------------------------------

_COMPOSITION_GREY = PaperDifference(
    MELISTAS_CODE,
    "counterfactual_benchmark/evaluation/metrics/composition.py:28 with evaluation/embeddings/embeddings.py:85-86",
    "The paper's code un-normalises the images to grey levels in [0, 255] before the mean absolute "
    "difference; cfcheck's images are in [0, 1].",
    "multiply cfcheck's value by 255.",
)
_EFFECTIVENESS_RAW = PaperDifference(
    MELISTAS_CODE,
    "counterfactual_benchmark/evaluation/metrics/effectiveness.py:31 (un-normalised targets and predictions)",
    "The paper's code reports the absolute error of a continuous parent in its raw units (pixels of "
    "stroke width, grey levels of brightness); cfcheck divides it by the parent's standard deviation on the "
    "scored split, so one bar serves every parent.",
    "multiply cfcheck's value by that standard deviation (the domain's scale of the parent).",
)
_CLD_MIXED_PARENTS = PaperDifference(
    MELISTAS_CODE,
    "counterfactual_benchmark/evaluation/metrics/minimality.py:38-39 and :51-52, with methods/deepscm/evaluate.py:172 and :189-191",
    "The paper's code keeps one parent value per image, the value of that image's intervened parent, and "
    "then forms S_x and S_x* by comparing those values with the current intervention's bins; each test "
    "batch intervenes on a randomly chosen parent, and all batches are scored together, so it compares "
    "values of different parents (a stroke width with a brightness). "
    "cfcheck compares the same parent's values for every real image.",
    bug=True,
)
_CLD_LOGSCALE = PaperDifference(
    MELISTAS_CODE,
    "counterfactual_benchmark/evaluation/metrics/minimality.py:17-18 (kl_divergence)",
    "The paper's code reads the posterior mean column as both the mean and the log-scale of the Gaussian, "
    "so its 'KL' is not the divergence between the posteriors; cfcheck uses the means and log-variances.",
    bug=True,
)

# -- Bex et al.: the flip categories and S# ---------------------------------------------------------------

_BEX_SUCCESS = PaperDifference(
    BEX_CODE,
    "bex/utils.py:88-96 (get_successful_cf)",
    "The code's success rule excuses a flip only when the classifier and the causal oracle agree on both "
    "the input and the counterfactual; on an input the classifier misclassifies, a counterfactual that "
    "flips both is counted as a successful non-causal flip, and the trivial count leaves it out. cfcheck "
    "follows the paper's equations: a flip of both is trivial, whatever the input's label.",
    "none in general; on inputs the classifier labels as the causal oracle does, the categories coincide "
    "(both labels binary, as on the Synbols-like bundled domain; proximity aside, see the projection entry).",
)
_BEX_PER_SUCCESS = PaperDifference(
    BEX_CODE,
    "bex/utils.py:91-95 (get_successful_cf)",
    "The code divides the NCF and CF counts by the batch's number of successful counterfactuals, so the two "
    "are shares of the successes and sum to 1; cfcheck divides by the K counterfactuals asked for, per input.",
    "with the same categories, the code's NCF of a batch = Σ NCF / Σ SCE = mean ncf_rate / mean sce_rate "
    "over the batch's inputs (likewise CF); the code then averages these ratios over batches.",
)
_BEX_BOUND = PaperDifference(
    BEX_CODE,
    "bex/utils.py:8-45 (bound_z), called at bex/benchmark.py:279",
    "The code projects every counterfactual into the proximity region before scoring it (it shrinks the "
    "move, and its continuous rescaling is also applied to the categorical coordinates and twice to the "
    "continuous ones); cfcheck scores the counterfactual the method returned and counts one outside the "
    "region in no category.",
    "none: the projected counterfactual is another image, with its own predictions.",
)
_BEX_S_SHARP_MEAN = PaperDifference(
    BEX_CODE,
    "bex/utils.py:168-169 and :202 (compute_metrics)",
    "The code averages S# over the inputs with at least one successful counterfactual; cfcheck averages "
    "over every input (S# = 0 where none succeeds).",
    "the code's S# of a batch = mean S# / the share of inputs with S# ≥ 1.",
)
_BEX_SORTED_SUBSET = PaperDifference(
    BEX_CODE,
    "bex/utils.py:172-175 (compute_metrics)",
    "The code sorts the successful counterfactuals by their distance and then indexes all K candidates with "
    "the sorted positions, so the greedy set is built from the wrong counterfactuals (unsuccessful ones "
    "among them) unless the successful ones are the first of the K. cfcheck sorts and admits the "
    "successful ones only.",
    bug=True,
)
_BEX_SUMMED = PaperDifference(
    BEX_CODE,
    "bex/utils.py:189-191 (compute_metrics)",
    "The code's cosine is a sum of two parts: one cosine over all categorical features together (character "
    "and font, 96 values) and one over the continuous ones. cfcheck's default is one cosine of the "
    "concatenated features; its cosine='summed' option sums one cosine per categorical attribute plus the "
    "continuous one (three parts with two categorical attributes: character, font, continuous), so it is not the "
    "code's sum either.",
    "none: the set, and so S#, changes with the cosine.",
)
_BEX_ORDER = PaperDifference(
    BEX_CODE,
    "bex/utils.py:136-137 and :172 (transform_embedding, compute_metrics)",
    "The code orders candidates by the L1 distance between perturbation features (the input's one-hot "
    "categories against the counterfactual's soft ones) and its softmax multiplies distances by 3 "
    "(temperature 1/3); cfcheck orders by ‖z′ − z‖₁ in the latent coordinates and uses the paper's "
    "temperature 0.33.",
    "none: the order can change which counterfactuals the greedy set keeps.",
)

# -- library code: density / coverage (prdc) and KID (torchmetrics) ---------------------------------------

_PRDC_OPEN = PaperDifference(
    PRDC_CODE,
    "prdc/prdc.py:77-92 (compute_prdc: distance < radius)",
    "The reference implementation counts a fake sample inside a real sample's ball when its distance is "
    "strictly below the radius (open ball); cfcheck counts it at the radius too (closed ball).",
    "none needed on continuous features (a tie has probability 0): the two agree exactly; they differ only "
    "on tied features (duplicated or quantised samples), where cfcheck's value is the larger.",
)
_KID_SUBSETS = PaperDifference(
    TORCHMETRICS_KID,
    "torchmetrics/image/kid.py:288-296 (KernelInceptionDistance.compute)",
    "torchmetrics averages the unbiased MMD² over random subsets (by default 100 subsets of 1000 samples "
    "from each set); cfcheck takes the unbiased MMD² over all pairs of the two sets, whose sizes may differ.",
    "none per run: both are unbiased estimates of the same MMD²; on two sets of one size, a single subset "
    "holding every sample gives cfcheck's value exactly.",
)

_SYNBOLS_RATES = (_BEX_SUCCESS, _BEX_BOUND)

#: card key → its differences from the papers' code
PAPER_DIFFERENCES: dict[str, tuple[PaperDifference, ...]] = {
    "lvs_target": (_LVS_NATS,),
    "lvs_unrelated": (_LVS_NATS,),
    "oracle_score": (_ORACLE_TARGET,),
    "im1": (_IM1_PREDICTED, _IM_EPSILON, _BLANK_SKIPPED),
    "im2": (_IM_EPSILON, _BLANK_SKIPPED),
    "d1": (_batch_norm("1"),),
    "d1_5": (_batch_norm("1.5"),),
    "d2": (_batch_norm("2"),),
    "original_accuracy": (_OA_LABEL,),
    "composition_l1": (_COMPOSITION_GREY,),
    "effectiveness_error": (_EFFECTIVENESS_RAW,),
    "effectiveness_predictor_error": (_EFFECTIVENESS_RAW,),
    "cld": (_CLD_MIXED_PARENTS, _CLD_LOGSCALE),
    "cld_p_counterfactual": (_CLD_MIXED_PARENTS, _CLD_LOGSCALE),
    "cld_p_factual": (_CLD_MIXED_PARENTS, _CLD_LOGSCALE),
    "synbols_ef_rate": (_BEX_BOUND,),
    "synbols_ncf_rate": (*_SYNBOLS_RATES, _BEX_PER_SUCCESS),
    "synbols_cf_rate": (*_SYNBOLS_RATES, _BEX_PER_SUCCESS),
    "synbols_sce_rate": _SYNBOLS_RATES,
    "synbols_trivial_rate": _SYNBOLS_RATES,
    "synbols_s_sharp": (
        _BEX_SUCCESS,
        _BEX_BOUND,
        _BEX_S_SHARP_MEAN,
        _BEX_SORTED_SUBSET,
        _BEX_SUMMED,
        _BEX_ORDER,
    ),
    "density_target": (_PRDC_OPEN,),
    "density_domain": (_PRDC_OPEN,),
    "coverage_target": (_PRDC_OPEN,),
    "coverage_domain": (_PRDC_OPEN,),
    "kid_target": (_KID_SUBSETS,),
    "kid_domain": (_KID_SUBSETS,),
}
