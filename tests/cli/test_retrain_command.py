"""One retraining parser (cfcheck.core.retrain) behind every retrain command line, and one dispatch:
``cfcheck retrain`` hands the request to the domain's recipe function (``BundledDomain.retrain``)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from cfcheck.cli import main
from cfcheck.core.retrain import RetrainRequest, add_retrain_arguments, retrain_request
from cfcheck.domains.base import BundledDomain
from cfcheck.domains.glyphs.domain import GlyphsDomain


def _parse(argv, domain="optional"):
    parser = argparse.ArgumentParser()
    add_retrain_arguments(parser, domain=domain)
    return parser.parse_args(argv)


def test_the_parser_reads_every_option_into_a_request(tmp_path):
    args = _parse(
        [
            "--domain",
            "morpho",
            "--only",
            "cnn",
            "--only",
            "mlp",
            "--smoke",
            "--out",
            str(tmp_path),
            "--device",
            "cuda",
            "--threads",
            "3",
        ]
    )
    assert retrain_request(args) == RetrainRequest("morpho", ["cnn", "mlp"], tmp_path, True, "cuda", 3)
    assert retrain_request(_parse([]), "gmm") == RetrainRequest("gmm")  # the defaults
    with pytest.raises(ValueError, match="--domain"):
        retrain_request(_parse([]))
    with pytest.raises(SystemExit):
        _parse([], domain="required")
    with pytest.raises(SystemExit):
        _parse(["--domain", "morpho"], domain=None)  # a domain's own command takes no --domain
    with pytest.raises(ValueError, match="optional"):
        add_retrain_arguments(argparse.ArgumentParser(), domain="sometimes")


@pytest.fixture
def requests(monkeypatch):
    """The requests each domain's recipe function receives (nothing is trained)."""
    seen: list[tuple[str, RetrainRequest]] = []
    monkeypatch.setattr(BundledDomain, "retrain", lambda self, request: seen.append(("cfcheck", request)) or {})
    monkeypatch.setattr(GlyphsDomain, "retrain", lambda self, request: seen.append(("own", request)) or {})
    return seen


def test_cfcheck_retrain_hands_the_request_to_the_domains_recipe_function(requests, tmp_path):
    assert main(["retrain", "--domain", "glyphs", "--smoke", "--only", "encoder", "--out", str(tmp_path)]) == 0
    assert main(["retrain", "--only", "cnn", "--threads", "2"]) == 0  # the domain holding cnn
    assert main(["retrain", "--domain", "gmm", "--smoke", "--out", str(tmp_path)]) == 0
    assert [(recipe, r.domain, r.only, r.smoke, r.threads) for recipe, r in requests] == [
        ("own", "glyphs", ["encoder"], True, 1),
        ("cfcheck", "morpho", ["cnn"], False, 2),
        ("cfcheck", "gmm", None, True, 1),
    ]


def test_cfcheck_recipes_split_the_names_between_classifier_and_generative_recipes(monkeypatch, tmp_path):
    from cfcheck.domains import get_domain
    from cfcheck.models import generative
    from cfcheck.models.classifiers import training

    calls, handed = [], []
    monkeypatch.setattr(
        training,
        "train_reference_models",
        lambda **kw: calls.append(("classifiers", kw["names"])) or handed.append(kw["domain"]) or {},
    )
    monkeypatch.setattr(
        generative,
        "train_generative_models",
        lambda domain, names, out, **kw: calls.append(("generative", names)) or handed.append(domain) or {},
    )
    morpho, gmm = get_domain("morpho"), get_domain("gmm")
    morpho.retrain(RetrainRequest("morpho", ["cnn", "ddpm"], tmp_path, smoke=True))
    morpho.retrain(RetrainRequest("morpho", ["ddpm"], tmp_path, smoke=True))
    gmm.retrain(RetrainRequest("gmm", None, tmp_path, smoke=True))
    assert [id(domain) for domain in handed] == [id(morpho), id(morpho), id(morpho), id(gmm)]  # the objects
    assert calls == [
        ("classifiers", ["cnn"]),
        ("generative", ["ddpm"]),
        ("generative", ["ddpm"]),
        ("classifiers", None),
    ]


def test_a_domain_without_bundled_models_is_refused(monkeypatch, capsys):
    import cfcheck.domains as domains

    monkeypatch.setattr(domains, "get_domain", lambda name: object())
    assert main(["retrain", "--domain", "mine"]) == 2
    assert "has no bundled models" in capsys.readouterr().err


def test_the_glyph_recipes_refuse_a_device_or_threads_they_do_not_use(tmp_path, capsys):
    assert main(["retrain", "--domain", "glyphs", "--device", "cuda", "--smoke", "--out", str(tmp_path)]) == 2
    assert "on the CPU with one thread" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "names_a_domain"),
    [
        ([sys.executable, "-m", "cfcheck.cli", "retrain"], True),
        ([sys.executable, "-m", "cfcheck.domains.glyphs.training"], False),
    ],
)
def test_the_retrain_command_and_a_domains_training_module_read_the_same_options(command, names_a_domain):
    shown = subprocess.run(
        [*command, "--help"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
    ).stdout
    for option in ("--only", "--smoke", "--out", "--device", "--threads"):
        assert option in shown
    assert ("--domain" in shown) == names_a_domain
