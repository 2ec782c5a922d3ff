"""Reading a domain's attribute table and checking it against the declarations and the images.

A table gives one value per image and attribute, as a mapping attribute -> 1-D array, a ``.csv``
file (a header row, a column per attribute) or an ``.npz`` file (one array per attribute). Its rows
follow the images' order (an :class:`~cfcheck.domains.data.ArraySource`'s rows; a
:class:`~cfcheck.domains.folders.FolderSource`'s files, sorted by class folder then name), except a
CSV for a folder source, which names each image in its ``id_column`` by the image's path relative
to the folder's root (``dark/007.png``) and may list its rows in any order and hold rows for other
images too.

Every problem is a :class:`~cfcheck.domains.registry.DomainError` naming the table, the attribute,
the row (the CSV line and the image where there are such) and what was expected.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.domains.attributes import BINARY, CONTINUOUS, Attribute
from cfcheck.domains.registry import DomainError

__all__ = ["read_columns"]

#: the spellings of a binary attribute's values a table may use (strings compared lower-cased)
BINARY_SPELLINGS: dict[Any, int] = {0: 0, 1: 1, "0": 0, "1": 1, "false": 0, "true": 1, "no": 0, "yes": 1}
#: how many offending rows a message names before counting the rest
SHOWN = 3


def read_columns(
    attributes: Sequence[Attribute], table: Any, source: Any, *, id_column: str = "file"
) -> dict[str, torch.Tensor]:
    """The table's values for ``source``'s images, row i for image i, checked against the declarations.

    Args:
        attributes: the declared attributes.
        table: a mapping attribute -> 1-D array, or the path of a ``.csv`` or ``.npz`` file.
        source: the images (anything with a length; a folder source, with ``image_ids``, is matched by path).
        id_column: the CSV column that names a folder source's images.

    Returns:
        attribute -> tensor of ``len(source)`` values: int64 codes (binary: 0/1; categorical: the index
        of the value in the declared values), float32 for a continuous attribute.

    Raises:
        DomainError: naming the table, attribute, row and what was expected.
    """
    ids = getattr(source, "image_ids", None)
    if isinstance(table, Mapping):
        where, raw, line = "the attribute table (arrays)", {k: _array(v) for k, v in table.items()}, None
    elif isinstance(table, (str, Path)) and Path(table).suffix.lower() == ".csv":
        where, raw, line = str(table), *_read_csv(Path(table))
    elif isinstance(table, (str, Path)) and Path(table).suffix.lower() == ".npz":
        where, raw, line = str(table), _read_npz(Path(table)), None
    else:
        raise DomainError(
            f"attribute table {table!r}: expected a mapping attribute -> array, or the path of a .csv or .npz file"
        )
    missing = [a.name for a in attributes if a.name not in raw]
    if missing:
        raise DomainError(
            f"{where}: no column for attribute(s) {missing}; it holds {sorted(raw)} (one column per declared attribute)"
        )
    for name in (a.name for a in attributes):
        if raw[name].ndim != 1:
            raise DomainError(
                f"{where}: attribute {name!r} has shape {raw[name].shape}; expected one value per image (1-D)"
            )
    lengths = {len(raw[a.name]) for a in attributes}
    if len(lengths) > 1:
        sizes = {a.name: len(raw[a.name]) for a in attributes}
        raise DomainError(
            f"{where}: the attributes' columns differ in length {sizes}; expected one value per image each"
        )
    rows = _rows(where, raw, lengths.pop(), line, source, ids, id_column)

    def describe(image: int) -> str:
        """Where image ``image``'s row is: its CSV line or table row, and the image's path."""
        row = int(rows[image])
        where_row = f"line {int(line[row])}" if line is not None else f"row {row}"
        return where_row + (f", image {ids[image]!r}" if ids is not None else "")

    # only the images' rows are read: a CSV may hold rows of images the domain does not have
    return {a.name: _encode(a, raw[a.name][rows], where, describe) for a in attributes}


def _array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _read_csv(path: Path) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Columns (strings) and the file line of every row."""
    if not path.is_file():
        raise DomainError(f"{path}: no such attribute table (expected a CSV with a header row)")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if not header:
            raise DomainError(
                f"{path}: an empty file; expected a header row naming the attributes, then one row per image"
            )
        header = [name.strip() for name in header]
        cells: list[list[str]] = [[] for _ in header]
        lines = []
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue  # blank lines
            if len(row) != len(header):
                raise DomainError(
                    f"{path}, line {reader.line_num}: {len(row)} cells, but the header has {len(header)} columns"
                )
            for column, cell in zip(cells, row):
                column.append(cell.strip())
            lines.append(reader.line_num)
    return {name: np.asarray(column, dtype=object) for name, column in zip(header, cells)}, np.asarray(lines)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise DomainError(f"{path}: no such attribute table (expected an .npz with one array per attribute)")
    with np.load(path, allow_pickle=False) as data:
        return {name: np.asarray(data[name]) for name in data.files}


def _rows(
    where: str,
    raw: Mapping[str, np.ndarray],
    count: int,
    line: np.ndarray | None,
    source: Any,
    ids: Any,
    id_column: str,
) -> np.ndarray:
    """For every image of ``source``, the table row (of ``count``) that describes it."""
    if ids is None or line is None:  # rows follow the images' order
        if count != len(source):
            origin = getattr(source, "name", "the images")
            raise DomainError(
                f"{where}: {count} rows, but {origin} holds {len(source)} images; expected one row per image, "
                "in the images' order"
            )
        return np.arange(count)
    if id_column not in raw:
        raise DomainError(
            f"{where}: no column {id_column!r}; a folder source's table names each image by its path relative "
            f"to {source.root} there (or pass id_column=...); it has columns {sorted(raw)}"
        )
    found: dict[str, int] = {}
    for row, name in enumerate(raw[id_column].tolist()):
        key = Path(str(name).replace("\\", "/")).as_posix()
        if key in found:
            raise DomainError(
                f"{where}: image {key!r} has two rows (lines {int(line[found[key]])} and {int(line[row])}); expected one"
            )
        found[key] = row
    absent = [image for image in ids if image not in found]
    if absent:
        shown = ", ".join(repr(a) for a in absent[:SHOWN]) + (
            f" and {len(absent) - SHOWN} more" if len(absent) > SHOWN else ""
        )
        raise DomainError(
            f"{where}: no row for {len(absent)} of the {len(ids)} images of {source.root} ({shown}); expected one row "
            f"per image, naming its path relative to {source.root} in column {id_column!r}"
        )
    return np.asarray([found[image] for image in ids], dtype=np.int64)


def _encode(attribute: Attribute, raw: np.ndarray, where: str, describe: Callable[[int], str]) -> torch.Tensor:
    """The column (one value per image) as codes (discrete) or float32 (continuous); the first
    offending images named by ``describe``."""
    values = raw.tolist()
    if attribute.kind == CONTINUOUS:
        out = np.empty(len(values), dtype=np.float64)
        bad: list[int] = []
        for row, value in enumerate(values):
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            out[row] = number
            if not math.isfinite(number):
                bad.append(row)
        if bad:
            raise DomainError(
                f"{where}: attribute {attribute.name!r} (continuous) is {_shown(values, bad, describe)}; "
                "expected a finite number in every row"
            )
        return torch.from_numpy(out.astype(np.float32))
    lookup: dict[Any, int] = (
        dict(BINARY_SPELLINGS) if attribute.kind == BINARY else {v: code for code, v in enumerate(attribute.values)}
    )
    by_text = {str(v).strip().lower() if attribute.kind == BINARY else str(v): code for v, code in lookup.items()}
    codes = np.empty(len(values), dtype=np.int64)
    bad = []
    for row, value in enumerate(values):
        code = _code(value, lookup, by_text, attribute.kind == BINARY)
        if code is None:
            bad.append(row)
        else:
            codes[row] = code
    if bad:
        expected = "0 or 1 (or true/false, yes/no)" if attribute.kind == BINARY else f"one of {list(attribute.values)}"
        raise DomainError(
            f"{where}: attribute {attribute.name!r} ({attribute.kind}) is {_shown(values, bad, describe)}; "
            f"expected {expected}"
        )
    return torch.from_numpy(codes)


def _code(value: Any, lookup: Mapping[Any, int], by_text: Mapping[str, int], binary: bool) -> int | None:
    """The code of one cell: the declared value it equals (a bool only as a binary value), else the
    one its text spells (a binary cell also as a number, "1.0")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str)) and (binary or not isinstance(value, bool)) and value in lookup:
        return lookup[value]
    text = str(value).strip()
    if not binary:
        return by_text.get(text)
    try:
        number = float(text)
    except ValueError:
        return by_text.get(text.lower())
    return int(number) if number in (0.0, 1.0) else None


def _shown(values: list[Any], bad: list[int], describe: Callable[[int], str]) -> str:
    """``2 in line 4 (image 'a.png'), 3 in line 9 and 2 more rows``."""
    named = ", ".join(f"{_text(values[row])} in {describe(row)}" for row in bad[:SHOWN])
    return named + (f" and {len(bad) - SHOWN} more rows" if len(bad) > SHOWN else "")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return "empty" if value == "" else repr(value)
    return repr(value)
