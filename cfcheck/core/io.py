"""The one way cfcheck writes a file: atomically.

A reader (another pytest worker, a CI step, a user opening a scorecard) must never see half of
a manifest, a weight file or a report. Every writer therefore goes through
:func:`atomic_write_bytes` / :func:`atomic_write_text`: the data goes to a temporary file in
the destination's folder (same file system, so the rename is atomic), which then replaces the
destination with :func:`os.replace`. On any exception the temporary file is removed and the
destination is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text"]

#: permissions of a written file: mkstemp creates 0600, but weights, manifests and reports
#: are meant to be readable by others
FILE_MODE = 0o644


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating the parent folder if needed.

    Args:
        path: destination file; an existing file is replaced only once the new bytes are
            completely written.
        data: the file's new content.

    Returns:
        The destination as a :class:`~pathlib.Path`.

    Raises:
        TypeError: if ``data`` is not bytes-like.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write_bytes expects bytes, got {type(data).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (no newline translation), creating the parent folder.

    Args:
        path: destination file.
        text: the file's new content, written as is (``"\\n"`` stays ``"\\n"`` on every OS).
        encoding: text encoding.

    Returns:
        The destination as a :class:`~pathlib.Path`.

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"atomic_write_text expects str, got {type(text).__name__}")
    return atomic_write_bytes(path, text.encode(encoding))
