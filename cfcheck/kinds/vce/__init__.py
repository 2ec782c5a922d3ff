"""Visual counterfactual explainers: ``explain(x, target, classifier) -> x_cf``.

Tasks are (domain, explained classifier, pair set, seed): ``n_per_source`` scored images of
every class, sent to the class the oracle committee confuses them with most ("ideal") or to a
random other class ("other"). The random-classifier and cascading-randomisation tasks need the
trained counterpart's task on the same inputs, and declare it.
"""
