"""Visual counterfactual explainers (VCE) and their controls: ``explain(x, target, classifier,
*, generator=None) -> x_cf | (x_cf, valid)``, on the one preamble :class:`.contract.VisualExplainer`."""
