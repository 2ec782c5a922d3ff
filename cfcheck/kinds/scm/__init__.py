"""SCM counterfactual generators: ``counterfactual(x, parents, intervention) -> x_cf``.

Tasks are (domain, intervened factor, seed): ``n_inputs`` scored images with their observed
parents (a dict of N-tensors keyed by the domain's factor names) and one intervention, a dict
with one factor and the N new values, each in another bin than the observed value (10 bins for
a continuous factor, as Melistas et al. 2024). The domain's true counterfactual of every input
is computed where the domain can (capability ``intervention_counterfactual``).
"""
