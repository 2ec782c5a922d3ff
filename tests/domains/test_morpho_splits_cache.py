"""Rendered splits and the glyph bank come from the on-disk cache exactly as rendering makes them."""

from __future__ import annotations

import torch

from cfcheck.domains.morpho import fonts, splits
from cfcheck.domains.morpho.rendering import render


def test_a_split_read_back_from_disk_equals_a_fresh_render(tmp_path, monkeypatch):
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE", raising=False)
    splits._rendered_split.cache_clear()
    first = splits.load_split("val", 64)  # rendered and stored
    assert list((tmp_path / "derived").rglob("*.safetensors"))
    splits._rendered_split.cache_clear()
    second = splits.load_split("val", 64)  # read back
    assert torch.equal(first.images, second.images)
    assert torch.equal(second.images, render(splits.split_factors("val", 64)))
    splits._rendered_split.cache_clear()


def test_the_glyph_bank_read_back_from_disk_equals_a_fresh_build(tmp_path, monkeypatch):
    monkeypatch.setenv("CFCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CFCHECK_NO_DERIVED_CACHE", "1")
    fonts.glyph_bank.cache_clear()
    built = fonts.glyph_bank()
    monkeypatch.delenv("CFCHECK_NO_DERIVED_CACHE")
    fonts.glyph_bank.cache_clear()
    fonts.glyph_bank()  # stored
    fonts.glyph_bank.cache_clear()
    loaded = fonts.glyph_bank()  # read back
    assert torch.equal(built[0], loaded[0]) and torch.equal(built[1], loaded[1])
