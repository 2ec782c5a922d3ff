"""The roles a domain's models play: the one vocabulary of ``Domain.model_roles``.

It lives with the models (the model zoo reads it) and the domains re-export it, so neither layer
imports the other for it.
"""

#: Roles a method under test may load models of (its tools: the classifiers it explains, the
#: generative priors it may build on). Role → what the models are.
METHOD_ROLES: dict[str, str] = {
    "explained": "classifiers a method explains",
    "random": "a randomly initialised classifier (random-model sanity)",
    "randomisation_counterpart": "the trained classifier the random one is compared with",
    "robust": "an adversarially trained classifier whose gradients a method may borrow (DVCE's cone)",
    "diffusion": "the domain's diffusion model (a method's generative prior)",
    "retrained": "the model whose recipe removal benchmarks (ROAR, GOAR) retrain on removed data",
    "attribute_mechanisms": "flows of the SCM's continuous parents (abduction and prediction)",
    "scm_image_mechanisms": "conditional generative models of the image given its SCM parents (abduction and "
    "prediction of the image mechanism; an SCM generator builds on one of them)",
    "latent_explained": "the latent classifier a latent explainer explains (Synbols)",
    "latent_generator": "the generator g(z) of a latent space",
    "latent_encoder": "the encoder of a latent space",
}
#: Roles of the models that score a method; a method may never load them. Role → what they are.
EVALUATION_ROLES: dict[str, str] = {
    "oracles": "the oracle committee: independently trained classifiers of other architectures",
    "attribute_oracles": "one classifier per attribute (its store entry names the attribute), for LVS",
    "class_attribute_oracle": "the attribute oracle that reads the class itself (the LVS of the target)",
    "embedding": "the domain embedding network for FID, KID and the perceptual distance",
    "autoencoders": "IM1/IM2 autoencoders, one per class (entry field 'label') and one of all classes",
    "anticausal_predictors": "evaluation: one predictor per SCM parent (effectiveness, composition embedding)",
    "minimality_vae": "evaluation: the unconditional VAE whose posteriors give CLD's distance",
}
#: Every model role (role → model names in ``Domain.model_roles``): the one vocabulary.
MODEL_ROLES = (*METHOD_ROLES, *EVALUATION_ROLES)
