"""The bundled controls and what each exists to show: the one table that the calibration
(:mod:`cfcheck.calibration.run`) runs and the cards' measured evidence
(:mod:`cfcheck.calibration.evidence`) orders its controls by. A leaf: it imports nothing of cfcheck."""

from __future__ import annotations

#: The bundled controls and the baseline, and the suites each is expected to pass (+) or fail (−).
CONTROLS: dict[str, str] = {
    "truth": "+validity +closeness +realism −random_classifier +ground_truth",
    "truth_rejecting": "+validity +closeness +realism +random_classifier +ground_truth",
    "random_target": "+validity −closeness +realism −random_classifier −ground_truth",
    "nearest": "+validity −closeness −ground_truth",
    "identity": "−validity +closeness −realism −random_classifier −ground_truth",
    "noise": "−validity −closeness −realism −ground_truth",
    "pgd": "−validity −ground_truth",
    # the target class's mean image for every input: one blurred prototype per class fails coverage
    # and FID (no variety); it lies where its class is dense, so density does not fail it (the density
    # cards say so); not expected to fail ground_truth: a class mean is close to every member of the class
    "class_mean": "−realism",
    # the truth for a share of the inputs, the unchanged input for the rest: the validity bars ask
    # for 80 % right counterfactuals, so the mixtures below it must fail and those well above pass;
    # the 90 % mixture's validity (0.86–0.93, the truth itself misses a few targets) has an interval
    # that reaches the 0.8 bar at the quick profile's 120 inputs on some seeds: it passes or is
    # inconclusive there, so it is expected to pass only the ground-truth bar
    "truth_mixture_50": "−validity −ground_truth",
    "truth_mixture_70": "−validity −ground_truth",
    "truth_mixture_80": "(on the validity and ground-truth bars)",
    "truth_mixture_90": "+ground_truth",
    "truth_mixture_95": "+validity +ground_truth",
    "wachter": "(baseline)",
}
#: Reference methods tabulated beside the controls (``--methods ... dvce fastdime``), not run by
#: default (each takes minutes) and never drawn as calibration markers.
REFERENCE_METHODS: dict[str, str] = {
    "dvce": "(diffusion reference)",
    "fastdime": "(diffusion reference)",
}
#: The SCM controls (``cfcheck calibrate --methods scm_truth scm_identity scm_resample scm_noise``).
SCM_CONTROLS: dict[str, str] = {
    "scm_truth": "+composition +effectiveness +causal_graph +realism +ground_truth",
    "scm_identity": "+composition −effectiveness −causal_graph −realism −ground_truth",
    "scm_resample": "−composition +effectiveness +causal_graph +realism −ground_truth",
    "scm_noise": "−composition −effectiveness −causal_graph −realism −ground_truth",
}
SUITES = ("validity", "closeness", "realism", "random_classifier")
SCM_SUITES = ("composition", "effectiveness", "causal_graph", "realism")


def is_control(name: str) -> bool:
    """Whether ``name`` is a bundled control (expected to pass or fail some suite): not the
    baseline, a reference method or an unknown one."""
    return any(word[:1] in "+−" for word in (CONTROLS.get(name) or SCM_CONTROLS.get(name, "")).split())
