"""Latent explainers (Bex et al.): ``explain(z, latent_classifier, generator) -> z_cf`` (N×K×D).

``generator`` is the domain's decoder g(z), as in the paper; cfcheck's seeded random-number
generator is passed as ``rng=``. No bundled domain has a latent space yet: the glyphs
(Synbols) domain brings one, with this kind's tasks and suites. Until then a latent method's
suites are skipped with that reason.
"""
