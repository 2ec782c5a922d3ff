"""Latent explainers (Synbols) and their controls: ``explain(z, latent_classifier, generator, *,
rng=None) -> z_cf`` (N×K×D)."""
