"""Removal benchmarks of attributions (ROAR, ROAD, GOAR): curve areas and the gap to random.

Each curve is per test input (see :mod:`cfcheck.metrics.removal_curves`); a score is the mean
over inputs of the per-input area. ROAD retrains nothing: its interval is a percentile bootstrap
over the inputs. ROAR and GOAR retrain per level, ``retraining_draws`` times (3 in every bundled
profile): their interval is the crossed t interval over the draws × inputs table, so it covers the
retraining noise as well as the inputs (with one draw, the bootstrap over inputs, models fixed).
"""

from __future__ import annotations

from cfcheck.metrics.card import MetricCard

_PARK = "Park et al. 2023 (GOAR), §3–4 and appendix B"
_ROAR = "Hooker et al. 2019 (ROAR); " + _PARK
_ROAD = "Rong et al. 2022 (ROAD); " + _PARK
_INPUTS = (
    "attributions of removal_train training and removal_test scored inputs, each for the class the "
    "explained model predicts; pixels ranked by the signed attribution summed over channels"
)
_ABSTAIN = "every input needs an attribution: an abstention makes the score unavailable"
_AREA = "trapezoid area under the per-input curve over the levels (0 included), divided by their span"
_GAP = (
    "area(method) − area(random) per input, signed so that positive means better than cfcheck's seeded "
    "random attribution on the same inputs"
)
_NO_BAR = (
    "Reported without a verdict: an area is not compared with anything; its gap to the random attribution "
    "is the score that may gate."
)
_DIAGNOSTIC = "Reported without a verdict: it says how far to trust the curve, not how good the attribution is."
#: what a gap's interval covers, and what the calibration adds
_RETRAINING = (
    "The 95% interval covers the retraining as well as the inputs: the model is retrained retraining_draws "
    "times per level (3 in every bundled profile; draw 0's seed is REMOVAL_SEED + the run's --cfcheck-seed, "
    "the others come from their own seed stream), the method's and the random attribution's curves share "
    "each draw's seed, and the interval is the crossed t interval (cfcheck.metrics.stats.crossed_interval) "
    "of the draws × inputs table of gaps, with Satterthwaite's degrees of freedom: with 3 draws whose "
    "means disagree it is wide, as it should be, where a bootstrap over inputs alone would call one lucky "
    "retraining significant. The value is the mean over draws and inputs; each draw's mean is kept with "
    "the score. With one draw the interval is the bootstrap over inputs and holds the models fixed. The "
    "calibration measures every control with the same draws, on three seeds, and a bar must clear "
    "independent random attributions on each of them (their spread is quoted in the bar's rationale, "
    "with the margin the bar keeps above the best of them). "
)
#: what a retrained strategy's interval resamples
_RETRAINED_INTERVAL = "retraining draws and inputs, crossed (one draw: the inputs, models fixed)"
#: the calibration's rule, shared by every gap card
_CALIBRATION = (
    "A bar is earned per domain by `cfcheck calibrate --kind attribution --domain D` "
    "(cfcheck.kinds.attribution.calibration): halfway between three independent random attributions "
    "(expected gap 0: fail) and the weakest of the positive controls (the gradient, input×gradient, "
    "SmoothGrad, integrated gradients and the gradient plus noise of 0.5–8 times its norm; on a domain "
    "with a true class feature, that feature and its noisy ladder), over seeds 0–2. The ladder also "
    "measures the score's resolution: its rungs count as positive controls, from the least noise up, "
    "while they clear every negative value on every seed; the noisier rungs count as neither. A bar "
    "needs at least one resolved rung, gaps that fall as the noise grows over the resolved rungs and the "
    "first unresolved one on every seed, and every positive above every negative. The controls' values per seed, and the calibration's reason where it gave no bar, are "
    "shown beside this card for every domain with a calibration file. "
)
#: what the bundled domains' calibrations found (their values files hold every number, per seed)
_ROAR_RESULT = (
    "Why a domain may keep no ROAR bar: where the retraining set is small the retraining noise can be "
    "as large as the effects, so the MoRF ladder need not fall even averaged over the draws, and a "
    "random attribution can reach a reference method's gap; where every coordinate carries the class, "
    "no removal moves the retrained accuracy and every gap is 0. A bar earned with a margin of a "
    "fraction of the negatives' spread lets an unlucky random attribution's mean come near it; its "
    "interval, which covers the retraining draws, then straddles the bar: inconclusive. Each domain's "
    "values and reason are shown beside this card."
)
_GOAR_RESULT = (
    "Where the ladder's noisiest rungs (noise 8 times the signal's norm keeps an eighth of it) do not "
    "clear every random attribution, the bar sits between the weakest resolved rung and the best "
    "random attribution, and the reason beside this card names the resolution. A GOAR curve projects every input "
    "at every strength and retrains per strength, so on an image domain the three seeds cost minutes per "
    "control; a domain measured on fewer seeds keeps no bar, and its values file says which were run. "
    "Each domain's values and reason are shown beside this card."
)

REMOVAL_CARDS = (
    MetricCard(
        "roar_area",
        "ROAR accuracy area (remove the ranked pixels, retrain)",
        f"{_AREA} of 1[retrained model correct on the removed test input], pixels set to the training mean",
        "none",
        (0.0, 1.0),
        "fraction of inputs (mean accuracy over the levels)",
        _INPUTS,
        _ABSTAIN,
        _ROAR,
        True,
        notes="Recorded as roar_area:morf (lower: the removed pixels carried the class) and roar_area:lerf "
        "(higher: the kept pixels carry it). Tied values are removed in raster order (Hooker et al.'s "
        "reference sorts without a random tie-break); each level removes round(p·H·W) pixels. " + _NO_BAR,
        interval=_RETRAINED_INTERVAL,
        computed_by=("cfcheck.kinds.attribution.removal.removal_curve", "cfcheck.metrics.removal_curves.curve_area"),
    ),
    MetricCard(
        "roar_gap",
        "ROAR area gap to the random attribution",
        _GAP,
        "higher",
        (-1.0, 1.0),
        "difference of mean accuracies",
        _INPUTS,
        _ABSTAIN,
        _ROAR,
        True,
        notes="Recorded as roar_gap:morf (random − method) and roar_gap:lerf (method − random). "
        + _RETRAINING
        + _CALIBRATION
        + _ROAR_RESULT,
        interval=_RETRAINED_INTERVAL,
        computed_by=("cfcheck.kinds.attribution.removal.removal_gap",),
    ),
    MetricCard(
        "road_area",
        "ROAD accuracy area (noisy linear imputation, no retraining)",
        f"{_AREA} of 1[explained model correct on the imputed test input]",
        "none",
        (0.0, 1.0),
        "fraction of inputs (mean accuracy over the levels)",
        _INPUTS,
        _ABSTAIN,
        _ROAD,
        True,
        notes="Recorded as road_area:morf and road_area:lerf. Exactly tied attribution values are removed in a "
        "random order fixed by the run's seed, as ROAD's reference breaks ties with a fixed random map: "
        "integrated gradients is 0 wherever x = 0, and a raster order would remove the background from the "
        "top down as one block, which the imputation smears into the object next to it and which ranks IG "
        "below the random attribution under LeRF (the removal benchmarks' tables in the documentation). Each level removes round(p·H·W) pixels "
        "per image (the reference truncates, int(p·H·W); at most one pixel apart). Inputs that are not "
        "images are laid out on the domain's pixel_grid (e.g. 8×8 for 64 features). " + _NO_BAR,
        computed_by=("cfcheck.kinds.attribution.removal.removal_curve", "cfcheck.metrics.removal_curves.curve_area"),
    ),
    MetricCard(
        "road_gap",
        "ROAD area gap to the random attribution",
        _GAP,
        "higher",
        (-1.0, 1.0),
        "difference of mean accuracies",
        _INPUTS,
        _ABSTAIN,
        _ROAD,
        True,
        notes="Recorded as road_gap:morf and road_gap:lerf. The verdict, where a domain has a bar, is 'better than "
        "the random attribution': the gap's 95% interval (a bootstrap over the shared inputs, so paired; ROAD "
        "retrains nothing) must clear the domain's bar. " + _CALIBRATION + "It does not say the attribution is "
        "faithful: an 'attribution' that returns the input itself ranks the object's pixels first and passes "
        "MoRF; its model-randomisation similarity (1: the same map under a random network) is what exposes "
        "it. Where LeRF keeps no bar the values file says why (the noisy ladder's LeRF gap can rise with the "
        "noise); where no control moves ROAD (every gap 0) no bar is earned.",
        computed_by=("cfcheck.kinds.attribution.removal.removal_gap",),
    ),
    MetricCard(
        "goar_area",
        "GOAR cumulative-misclassification area (feature removal, diffusion projection, retrain)",
        f"{_AREA} of 1[misclassified at this strength or a lower one], strengths = goar_levels × the domain's "
        "removal scale (median distance from a test input to the nearest training input of another class)",
        "higher",
        (0.0, 1.0),
        "fraction of inputs (mean cumulative error over the levels)",
        _INPUTS,
        _ABSTAIN,
        _PARK,
        True,
        notes="Projection: the timestep whose noise-to-signal ratio matches ‖v‖, 0.16·T (4 of 25 DDIM steps) "
        "more noise, DDIM to t = 0; the domain's exact denoiser where it has one, else its bundled "
        "DDPM. " + _NO_BAR,
        interval=_RETRAINED_INTERVAL,
        computed_by=("cfcheck.kinds.attribution.removal.removal_curve", "cfcheck.metrics.removal_curves.curve_area"),
    ),
    MetricCard(
        "roar_leakage",
        "ROAR mask leakage (accuracy from the masks alone)",
        "1[a model retrained on the MoRF removal masks alone (1 = removed, at the middle fraction) classifies the "
        "test input's mask correctly]",
        "lower",
        (0.0, 1.0),
        "fraction of inputs",
        _INPUTS,
        _ABSTAIN,
        "Rong et al. 2022 §3 (class information in the mask); " + _PARK,
        True,
        notes="High: where an attribution removes pixels says the class, so a retrained model can read the label "
        "off the removal pattern and ROAR understates the removal. " + _DIAGNOSTIC,
        computed_by=("cfcheck.kinds.attribution.removal_scoring.leakage",),
    ),
    MetricCard(
        "goar_leakage",
        "GOAR leakage without projection (accuracy on x − v)",
        "1[a model retrained on x − s·a/‖a‖ without the projection, at the largest strength, classifies the test "
        "input correctly]",
        "lower",
        (0.0, 1.0),
        "fraction of inputs",
        _INPUTS,
        _ABSTAIN,
        _PARK + " §4.1",
        True,
        notes="High: the move v itself carries the class (off-manifold), which the projection is there to remove; "
        "compare with goar_area. " + _DIAGNOSTIC,
        computed_by=("cfcheck.kinds.attribution.removal_scoring.leakage",),
    ),
    MetricCard(
        "goar_gap",
        "GOAR area gap to the random attribution",
        _GAP,
        "higher",
        (-1.0, 1.0),
        "difference of mean cumulative errors",
        _INPUTS,
        _ABSTAIN,
        _PARK,
        True,
        notes="Recorded as goar_gap (MoRF only, no order suffix; its bar is keyed goar_gap). "
        + _RETRAINING
        + _CALIBRATION
        + _GOAR_RESULT,
        interval=_RETRAINED_INTERVAL,
        computed_by=("cfcheck.kinds.attribution.removal.removal_gap",),
    ),
)
