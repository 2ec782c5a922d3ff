"""Phrases shared by the SCM kind's cards (image.py, models.py)."""

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
