"""Profiles and their overrides from [tool.cfcheck]."""

from __future__ import annotations

import pytest

from cfcheck.profiles import BUILTIN_PROFILES, Threshold, claim_section_settings, read_user_settings, resolve_profile


def _resolve(name, settings):
    """As the plugin does with a method under test: the profile with its kind sections claimed."""
    return claim_section_settings(resolve_profile(name, settings))


@pytest.mark.parametrize(("kind", "size"), [("vce", "n_per_source"), ("scm", "n_inputs"), ("attribution", "n_inputs")])
def test_builtin_profiles_grow_in_size(kind, size):
    quick, standard, full = (BUILTIN_PROFILES[n] for n in ("quick", "standard", "full"))
    sizes = [getattr(p.section(kind), size) for p in (quick, standard, full)]
    assert sizes[0] < sizes[1] < sizes[2]
    assert quick.seeds <= standard.seeds <= full.seeds


def test_a_kind_table_sets_a_field_several_kinds_share(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.cfcheck.scm]\nn_inputs = 7\n[tool.cfcheck.quick.attribution]\nn_inputs = 9\n"
    )
    settings = read_user_settings(tmp_path)
    quick = _resolve("quick", settings)
    assert quick.section("scm").n_inputs == 7 and quick.section("attribution").n_inputs == 9
    assert quick.section("latent").n_inputs == BUILTIN_PROFILES["quick"].section("latent").n_inputs
    (tmp_path / "pyproject.toml").write_text("[tool.cfcheck]\nn_inputs = 7\n")
    with pytest.raises(
        ValueError,
        match=r"'n_inputs' is ambiguous \(attribution, latent, scm define it\): set it in a \[tool.cfcheck.<kind>\] table",
    ):
        _resolve("quick", read_user_settings(tmp_path))


def test_overrides_apply_globally_then_per_profile(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        """
[tool.cfcheck]
n_per_source = 5
classifiers = ["cnn"]
[tool.cfcheck.thresholds]
target_accuracy = 0.95
d2 = {min = 1.0}
[tool.cfcheck.quick]
n_per_source = 3
[tool.cfcheck.quick.tolerances]
target_accuracy = 0.01
"""
    )
    settings = read_user_settings(tmp_path)
    quick = _resolve("quick", settings)
    standard = _resolve("standard", settings)
    assert quick.section("vce").n_per_source == 3 and standard.section("vce").n_per_source == 5
    assert quick.section("vce").classifiers == ("cnn",)
    assert quick.threshold("target_accuracy") == Threshold(0.95, "min")
    assert quick.threshold("d2") == Threshold(1.0, "min")
    assert quick.tolerances["target_accuracy"] == 0.01
    assert standard.tolerances["target_accuracy"] == BUILTIN_PROFILES["standard"].tolerances["target_accuracy"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("n_per_source = 0", "positive integer"),
        ("brand_new_setting = 1", r"unknown \[tool.cfcheck\] setting 'brand_new_setting'"),
        ("timeout = -1", "positive integer"),
        ("[tool.cfcheck.thresholds]\nbrand_new = 0.3", "needs a direction"),
        ("[tool.cfcheck.thresholds]\nlpips = 0.3", None),
        ('[tool.cfcheck.thresholds]\nd2 = "small"', "must be a number"),
        ("[tool.cfcheck.tolerances]\nd2 = -1", ">= 0"),
    ],
)
def test_bad_overrides_name_the_problem(tmp_path, toml, message):
    (tmp_path / "pyproject.toml").write_text("[tool.cfcheck]\n" + toml + "\n")
    if message is None:  # a metric without a default bar takes its card's direction
        assert resolve_profile("quick", read_user_settings(tmp_path)).threshold("lpips") == Threshold(0.3, "max")
        return
    with pytest.raises(ValueError, match=message):
        _resolve("quick", read_user_settings(tmp_path))


def test_unknown_profile():
    with pytest.raises(ValueError, match="expected one of"):
        resolve_profile("enormous")


def test_inconclusive_outcome_is_configurable(tmp_path):
    assert resolve_profile("quick").inconclusive == "fail"
    (tmp_path / "pyproject.toml").write_text('[tool.cfcheck]\ninconclusive = "xfail"\n')
    assert resolve_profile("quick", read_user_settings(tmp_path)).inconclusive == "xfail"
    (tmp_path / "pyproject.toml").write_text('[tool.cfcheck]\ninconclusive = "maybe"\n')
    with pytest.raises(ValueError, match="inconclusive must be one of"):
        resolve_profile("quick", read_user_settings(tmp_path))


def test_default_bars_come_from_the_metric_cards():
    from cfcheck.metrics.cards import CARDS

    for name, profile in BUILTIN_PROFILES.items():
        expected = {k: c.bar_for(name) for k, c in CARDS.items() if c.bar_for(name) is not None}
        assert dict(profile.thresholds) == expected
        assert profile.tolerances == {k: c.tolerance for k, c in CARDS.items()}
