"""Profiles and their overrides from [tool.cfcheck]."""

from __future__ import annotations

import pytest

from cfcheck.profiles import BUILTIN_PROFILES, Threshold, read_user_settings, resolve_profile


def test_builtin_profiles_grow_in_size():
    quick, standard, full = (BUILTIN_PROFILES[n] for n in ("quick", "standard", "full"))
    assert quick.n_per_source < standard.n_per_source < full.n_per_source
    assert quick.seeds <= standard.seeds <= full.seeds


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
    quick = resolve_profile("quick", settings)
    standard = resolve_profile("standard", settings)
    assert quick.n_per_source == 3 and standard.n_per_source == 5
    assert quick.classifiers == ("cnn",)
    assert quick.threshold("target_accuracy") == Threshold(0.95, "min")
    assert quick.threshold("d2") == Threshold(1.0, "min")
    assert quick.tolerances["target_accuracy"] == 0.01
    assert standard.tolerances["target_accuracy"] == BUILTIN_PROFILES["standard"].tolerances["target_accuracy"]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("n_per_source = 0", "positive integer"),
        ('classifiers = ["resnet152"]', "unknown entries"),
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
        resolve_profile("quick", read_user_settings(tmp_path))


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
