"""Reproductions of the papers' experiments outside pytest, run from the repository's root
(``python -m reproductions.<name>``); the findings tests (``tests/test_*_findings.py``,
``tests/test_diffusion_hypotheses.py``) assert what the papers state on smaller runs of them."""
