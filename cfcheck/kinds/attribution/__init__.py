"""Feature attributions: ``attribute(x, model, target) -> saliency`` shaped like ``x``.

Tasks are (domain, model, seed): ``n_inputs`` scored images, each explained for the class the
model predicts on it. The random-model task explains the domain's random classifier for the
same inputs and the trained counterpart's targets, and declares that it needs the trained
task (Adebayo et al.'s model-randomisation test compares the two maps).
"""
