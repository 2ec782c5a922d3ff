"""cfcheck.core.io: the one atomic write."""

from __future__ import annotations

import os

import pytest

from cfcheck.core import io as cfio
from cfcheck.core.io import atomic_write_bytes, atomic_write_text


def test_writes_creates_the_parent_and_replaces(tmp_path):
    path = tmp_path / "a" / "b" / "file.json"
    assert atomic_write_text(path, "one\n") == path
    assert path.read_text(encoding="utf-8") == "one\n"
    atomic_write_bytes(path, b"two")
    assert path.read_bytes() == b"two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["file.json"]  # no temp file left
    assert os.stat(path).st_mode & 0o777 == cfio.FILE_MODE


def test_text_is_written_without_newline_translation(tmp_path):
    path = tmp_path / "crlf.txt"
    atomic_write_text(path, "a\nb\r\n")
    assert path.read_bytes() == b"a\nb\r\n"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    atomic_write_text(path, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cfio.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_wrong_types_are_rejected(tmp_path):
    with pytest.raises(TypeError, match="expects bytes, got str"):
        atomic_write_bytes(tmp_path / "x", "text")
    with pytest.raises(TypeError, match="expects str, got bytes"):
        atomic_write_text(tmp_path / "x", b"bytes")


def test_scorecard_reexports_the_same_function():
    from cfcheck.reporting.scorecard import atomic_write

    assert atomic_write is atomic_write_text
