"""Latent explainers (Bex et al.): ``explain(z, latent_classifier, generator) -> z_cf`` (N×K×D).

``generator`` is the domain's decoder g(z), as in the paper; cfcheck's seeded random-number
generator is passed as ``rng=``. A domain with the ``latent_space`` capability gives the
tasks; see :mod:`cfcheck.kinds.latent.spec`.
"""
