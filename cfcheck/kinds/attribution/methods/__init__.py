"""Feature attributions and their controls: ``attribute(x, model, target) -> saliency like x``."""
