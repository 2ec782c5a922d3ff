"""The adapter ``cfcheck new-adapter latent`` writes: a latent explainer in ten lines."""

ADAPTER = """\
# {name}.py: a latent explainer for cfcheck (pytest --method={name}.py)
import pytest


class MyLatentExplainer:
    def explain(self, z, latent_classifier, generator, *, rng=None, k=10):
        # z: float N×D latents; latent_classifier(z) gives logits; generator(z) the images;
        # rng: a seeded torch.Generator; k: how many counterfactuals per input the profile asks for
        return z[:, None, :].repeat(1, k, 1)  # N×k×D counterfactual latents (this placeholder fails S#)


@pytest.fixture
def cf_method() -> MyLatentExplainer:  # the annotation tells cfcheck the kind before the run starts
    return MyLatentExplainer()
"""
