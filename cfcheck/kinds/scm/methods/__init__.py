"""SCM counterfactual generators and their controls: ``counterfactual(x, parents, intervention)
-> x_cf``."""
