"""A persistent cache of a method's generated outputs, so that a second identical run is free.

An entry is one safetensors file (never pickle) at ``<directory>/<key[:2]>/<key>.safetensors``.
Its metadata holds the entry's key, the cache format version and a sha256 digest of every
tensor's name, dtype, shape and bytes; :meth:`GenerationCache.load` recomputes and compares all
three, so a truncated, corrupted, foreign or renamed file is discarded and reported as a miss,
never trusted. Entries are written atomically (:func:`cfcheck.core.io.atomic_write_bytes`), so two
processes storing the same key at once are harmless: the last complete file wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import re
import struct
import sys
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import safetensors.torch
import torch

import cfcheck
from cfcheck.core.io import atomic_write_bytes

__all__ = [
    "CacheStats",
    "DerivedDataWarning",
    "GenerationCache",
    "default_cache_dir",
    "file_digest",
    "memoise_on_disk",
    "method_fingerprint",
    "tensor_digest",
]

#: bumped whenever the entry layout or what the digest covers changes; part of every key
CACHE_FORMAT = "1"
_KEY_RE = re.compile(r"[0-9a-f]{64}")
_META_KEY, _META_FORMAT, _META_DIGEST = "cfcheck.key", "cfcheck.format", "cfcheck.digest"


class DerivedDataWarning(UserWarning):
    """A derived-data entry on disk failed verification and was discarded (then recomputed)."""


@dataclass
class CacheStats:
    """What a :class:`GenerationCache` did during a run.

    Example:
        >>> CacheStats(hits=12, discarded=1).describe()
        'cache: 12 hits, 0 misses, 1 discarded entry, 0 stored'
    """

    hits: int = 0
    misses: int = 0
    discarded: int = 0
    stored: int = 0
    enabled: bool = True

    def describe(self) -> str:
        """Returns: a one-line summary, e.g. ``"cache: 12 hits, 0 misses, 1 discarded entry, 0 stored"``."""
        if not self.enabled:
            return "cache: disabled"
        plural = "entry" if self.discarded == 1 else "entries"
        hits = "hit" if self.hits == 1 else "hits"
        misses = "miss" if self.misses == 1 else "misses"
        return (
            f"cache: {self.hits} {hits}, {self.misses} {misses}, "
            f"{self.discarded} discarded {plural}, {self.stored} stored"
        )


def default_cache_dir() -> Path:
    """Returns: ``$CFCHECK_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cfcheck/generation``,
    else ``~/.cache/cfcheck/generation``.

    Example:
        >>> isinstance(default_cache_dir(), Path)
        True
    """
    if os.environ.get("CFCHECK_CACHE_DIR"):
        return Path(os.environ["CFCHECK_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "cfcheck" / "generation"


def _tensor_bytes(tensor: torch.Tensor) -> memoryview:
    """The tensor's bytes in C order, as a view where the tensor is already contiguous on the CPU
    (hashing the view instead of a ``tobytes()`` copy halves the cost of a digest)."""
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().data


def tensor_digest(*tensors: torch.Tensor) -> str:
    """Hash tensors by dtype, shape and bytes (the same bytes with another shape or dtype differ).

    Args:
        tensors: the tensors, in order (order matters).

    Returns:
        A sha256 hex digest.

    Raises:
        TypeError: if an argument is not a tensor.

    Example:
        >>> tensor_digest(torch.zeros(2)) != tensor_digest(torch.zeros(1, 2))
        True
    """
    digest = hashlib.sha256()
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"tensor_digest: argument {position} is a {type(tensor).__name__}, not a tensor")
        digest.update(f"{tensor.dtype}|{tuple(tensor.shape)}|{tensor.numel()}\0".encode())
        digest.update(_tensor_bytes(tensor))
    return digest.hexdigest()


def _entries_digest(tensors: dict[str, torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for name in sorted(tensors):
        digest.update(f"{len(name)}:{name}\0".encode())
        digest.update(tensor_digest(tensors[name]).encode())
    return digest.hexdigest()


def _module_source_part(module: types.ModuleType) -> str:
    """The hashed text for one module: its source, else its file's mtime, else its name only."""
    try:
        source = inspect.getsourcefile(module)
        if source is not None:
            return f"{module.__name__}\0source\0" + Path(source).read_bytes().hex()
    except (TypeError, OSError):  # built-in, or unreadable
        pass
    try:
        file = getattr(module, "__file__", None)
        if file is not None:
            return f"{module.__name__}\0mtime\0{os.stat(file).st_mtime_ns}"
    except (TypeError, OSError):
        pass
    return f"{module.__name__}\0unreadable"


def method_fingerprint(method: object, module: types.ModuleType | None) -> str:
    """Identify the code of a method so that editing it invalidates its cached outputs.

    A user-given ``method.cfcheck_version`` string wins (``"version:<it>"``). Otherwise the
    result is ``"source:<sha256>"`` over the source text of the adapter ``module`` (if given)
    and of the modules defining ``type(method)`` and the classes it inherits from (built-ins skipped). A module whose source
    cannot be read is hashed by its name and its file's mtime (by its name alone if it has no
    file), which detects less. Edits to *other* files the method imports (helpers, a model
    package, weights) are NOT detected: set ``cfcheck_version`` on the method and change it
    with such edits, or run with ``--cfcheck-no-cache``.

    Args:
        method: the method object the adapter built.
        module: the adapter module, or None.

    Returns:
        The fingerprint string, a key part for :meth:`GenerationCache.key`.

    Raises:
        TypeError: if ``cfcheck_version`` is set but is not a non-empty str.

    Example:
        >>> class M: cfcheck_version = "2024-06"
        >>> method_fingerprint(M(), None)
        'version:2024-06'
    """
    version = getattr(method, "cfcheck_version", None)
    if version is not None:
        if not isinstance(version, str) or not version.strip():
            raise TypeError(f"{type(method).__qualname__}.cfcheck_version must be a non-empty str, got {version!r}")
        return f"version:{version}"
    cls = type(method)
    parts = [f"type\0{cls.__module__}.{cls.__qualname__}"]
    seen: set[str] = set()
    # the classes it inherits from too: a base class's explain() (a shared preamble) is its code as well
    for candidate in (module, *(sys.modules.get(base.__module__) for base in cls.__mro__)):
        if candidate is None or candidate.__name__ in seen or candidate.__name__ == "builtins":
            continue
        seen.add(candidate.__name__)
        parts.append(_module_source_part(candidate))
    return "source:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


class GenerationCache:
    """Generated outputs on disk, keyed by everything that determines them.

    Args:
        directory: the cache folder (created on the first store), or None to disable the
            cache: :meth:`load` always returns None and :meth:`store` does nothing.

    Example:
        >>> cache = GenerationCache(None)
        >>> key = cache.key(method="pkg:Method", code="version:1", task="mine", inputs="ab12")
        >>> cache.store(key, {"x": torch.zeros(2)}); cache.load(key) is None
        True
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = None if directory is None else Path(directory)
        self.stats = CacheStats(enabled=directory is not None)

    def key(self, **parts: str | int | float) -> str:
        """Returns: the sha256 hex of the parts' canonical JSON (keyword order does not matter),
        cfcheck's version and the cache format version.

        Raises:
            ValueError: if no part is given, or a float part is NaN or infinite.
            TypeError: if a part is not a str, int or float.
        """
        if not parts:
            raise ValueError("GenerationCache.key needs at least one part")
        for name, value in parts.items():
            if not isinstance(value, (str, int, float)):
                raise TypeError(f"cache key part {name!r} is a {type(value).__name__}; use a str, int or float")
        payload = {"parts": parts, "cfcheck": cfcheck.__version__, "format": CACHE_FORMAT}
        try:
            text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except ValueError as error:
            raise ValueError(f"cache key parts must be finite numbers: {parts!r}") from error
        return hashlib.sha256(text.encode()).hexdigest()

    def path(self, key: str) -> Path:
        """Returns: where the entry for ``key`` lives. Raises: ValueError for a malformed key or
        a disabled cache."""
        if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
            raise ValueError(f"not a cache key (64 lowercase hex digits): {key!r}")
        if self.directory is None:
            raise ValueError("the generation cache is disabled: it has no entry paths")
        return self.directory / key[:2] / f"{key}.safetensors"

    def load(self, key: str) -> dict[str, torch.Tensor] | None:
        """Returns: the entry's tensors if it exists and verifies, else None. A bad entry is
        deleted and counted in ``stats.discarded``; a bad file never raises."""
        if self.directory is None:
            return None
        path = self.path(key)
        try:
            with open(path, "rb") as stream:
                stat = os.fstat(stream.fileno())
                data = stream.read()
        except OSError:
            self.stats.misses += 1
            return None
        tensors = self._verified(key, data)
        if tensors is None:
            self._discard(path, stat)
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return tensors

    @staticmethod
    def _verified(key: str, data: bytes) -> dict[str, torch.Tensor] | None:
        try:
            tensors = safetensors.torch.load(data)
            (length,) = struct.unpack("<Q", data[:8])
            meta = json.loads(data[8 : 8 + length]).get("__metadata__") or {}
        except (KeyboardInterrupt, SystemExit, MemoryError):
            raise
        except BaseException:  # SafetensorError, JSON errors, and pyo3's PanicException
            return None
        if (
            meta.get(_META_KEY) != key
            or meta.get(_META_FORMAT) != CACHE_FORMAT
            or meta.get(_META_DIGEST) != _entries_digest(tensors)
        ):
            return None
        return tensors

    def _discard(self, path: Path, stat: os.stat_result) -> None:
        try:
            now = os.stat(path)
            # a concurrent writer may have replaced the bad file with a good one meanwhile
            if (now.st_ino, now.st_mtime_ns, now.st_size) == (stat.st_ino, stat.st_mtime_ns, stat.st_size):
                path.unlink()
        except OSError:
            pass
        self.stats.discarded += 1

    def store(self, key: str, tensors: dict[str, torch.Tensor], meta: dict[str, str] | None = None) -> None:
        """Write ``tensors`` (moved to the CPU, made contiguous) under ``key``, atomically.

        Args:
            key: from :meth:`key`.
            tensors: the outputs by name; any dtype safetensors supports (bool included).
            meta: extra str metadata to keep in the file (names starting "cfcheck." are reserved).

        Raises:
            TypeError: for a non-str name or meta value, or a value that is not a tensor.
            ValueError: for a malformed key or a reserved meta name.
            OSError: if the file cannot be written (no temporary file is left behind).
        """
        path = None if self.directory is None else self.path(key)
        prepared: dict[str, torch.Tensor] = {}
        for name, tensor in tensors.items():
            if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
                raise TypeError(f"cache entries map str names to tensors; got {name!r}: {type(tensor).__name__}")
            prepared[name] = tensor.detach().to("cpu").contiguous()
        extra = dict(meta or {})
        for name, value in extra.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError(f"cache metadata must map str to str; got {name!r}: {value!r}")
            if name.startswith("cfcheck."):
                raise ValueError(f"cache metadata name {name!r} is reserved (prefix 'cfcheck.')")
        if path is None:
            return
        extra.update({_META_KEY: key, _META_FORMAT: CACHE_FORMAT, _META_DIGEST: _entries_digest(prepared)})
        atomic_write_bytes(path, safetensors.torch.save(prepared, metadata=extra))
        self.stats.stored += 1

    def clear(self) -> int:
        """Delete every entry (and leftover temporary files); other files are left alone.

        Returns:
            How many entries were deleted.
        """
        if self.directory is None or not self.directory.is_dir():
            return 0
        removed = 0
        for folder in self.directory.iterdir():
            if not (folder.is_dir() and re.fullmatch(r"[0-9a-f]{2}", folder.name)):
                continue
            for file in folder.iterdir():
                name = file.name
                is_entry = name.endswith(".safetensors") and bool(_KEY_RE.fullmatch(name[:-12]))
                is_temp = name.startswith(".") and name.endswith(".tmp") and ".safetensors." in name
                if is_entry or is_temp:
                    file.unlink(missing_ok=True)
                    removed += is_entry
            with contextlib.suppress(OSError):
                folder.rmdir()
        return removed


def memoise_on_disk(
    name: str,
    compute: Callable[[], dict[str, torch.Tensor]],
    **parts: str | int | float,
) -> dict[str, torch.Tensor]:
    """Deterministic data cfcheck derives (a domain's glyph bank, ...) computed once per machine.

    Entries live in ``<default_cache_dir()>/derived`` as verified :class:`GenerationCache`
    entries, keyed by ``name``, ``parts`` (put everything the data depends on there: a digest
    of the code that computes it, of its input files) and cfcheck's version. A missing entry is
    computed; a damaged one is discarded with a :class:`DerivedDataWarning` and recomputed; a cache that cannot be written (read-only home) costs only
    the time. ``CFCHECK_NO_DERIVED_CACHE=1`` turns it off.

    Args:
        name: what the data is ("mine.glyph_bank").
        compute: makes the tensors when they are not cached.
        parts: the rest of the key.

    Returns:
        The tensors, from the cache or from ``compute``.

    Example:
        >>> memoise_on_disk("doc.example", lambda: {"x": torch.ones(2)}, code="v1")["x"].tolist()
        [1.0, 1.0]
    """
    enabled = os.environ.get("CFCHECK_NO_DERIVED_CACHE", "") in ("", "0")
    cache = GenerationCache(default_cache_dir() / "derived" if enabled else None)
    key = cache.key(what=name, **parts)
    found = cache.load(key)
    if found is not None:
        return found
    if cache.stats.discarded:
        warnings.warn(
            f"cfcheck's derived data {name!r} at {cache.path(key)} failed its integrity check and was "
            "discarded; it is computed again",
            DerivedDataWarning,
            stacklevel=2,
        )
    tensors = compute()
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs the time
        cache.store(key, tensors)
    return tensors


def file_digest(*paths: str | os.PathLike[str]) -> str:
    """sha256 over the names and bytes of files (a code or data dependency of a cached value)."""
    digest = hashlib.sha256()
    for path in paths:
        data = Path(path).read_bytes()
        digest.update(f"{Path(path).name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()
