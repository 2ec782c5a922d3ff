"""Example grids: a seeded handful of inputs per task, as PNG files beside the scorecard.

Each task contributes one grid: rows are its first few inputs (fixed by the task's seed), columns
what its kind shows (a VCE: input, counterfactual, difference, true counterfactual). A grid is
``examples/<slug>.json`` (kind, what its outputs are called, domain, task, columns, rows of PNG
paths relative to the run folder) plus ``examples/<slug>/<row>_<column>.png``. Images are drawn as
images; an input that is a vector (a domain without a pixel grid) as a heat strip, one cell per
coordinate, blue–white–red around 0 (saliency: |value|, black to white). Workers of one run write their own tasks'
grids into the same folder; the Markdown and HTML scorecards read them all back.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from cfcheck.core.io import atomic_write_bytes, atomic_write_text

EXAMPLES_DIR = "examples"
#: columns holding signed changes: drawn blue (negative) – white – red (positive)
SIGNED_COLUMNS = ("difference",)
#: columns holding unbounded maps: |value| scaled to the image's maximum
MAP_COLUMNS = ("saliency",)


@dataclass(frozen=True)
class ExampleGrid:
    kind: str
    domain: str
    task: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]  # column → PNG path relative to the run folder
    #: what the kind's outputs are called ("counterfactuals", "saliency maps", …)
    shows: str = "outputs"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "domain": self.domain,
            "task": self.task,
            "columns": list(self.columns),
            "rows": list(self.rows),
            "shows": self.shows,
        }


def write_example_grid(
    run_dir: Path, kind: str, domain: str, task: str, columns: dict[str, torch.Tensor], shows: str = "outputs"
) -> ExampleGrid:
    """Write one task's grid: ``columns`` maps a column name to k×C×H×W images or k×D vectors (k
    rows; image values in [0, 1], signed for ``difference``, any real for ``saliency``); ``shows``
    names the kind's outputs for the page's heading."""
    if not columns:
        raise ValueError("an example grid needs at least one column")
    counts = {name: len(images) for name, images in columns.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"every column needs the same number of rows, got {counts}")
    slug = _slug(f"{kind}-{domain}-{task}")
    folder = Path(run_dir) / EXAMPLES_DIR / slug
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for row in range(next(iter(counts.values()))):
        cells = {}
        for name, images in columns.items():
            path = folder / f"{row}_{_slug(name)}.png"
            atomic_write_bytes(path, _png(images[row].detach().float().cpu(), name))
            cells[name] = path.relative_to(run_dir).as_posix()
        rows.append(cells)
    grid = ExampleGrid(kind, domain, task, tuple(columns), tuple(rows), shows)
    atomic_write_text(Path(run_dir) / EXAMPLES_DIR / f"{slug}.json", json.dumps(grid.to_dict(), indent=1) + "\n")
    return grid


def load_example_grids(run_dir: Path) -> list[ExampleGrid]:
    """Every grid in ``run_dir`` (sorted by kind, domain, task); unreadable index files are skipped."""
    grids = []
    for index in sorted((Path(run_dir) / EXAMPLES_DIR).glob("*.json")):
        try:
            data = json.loads(index.read_text())
            grids.append(
                ExampleGrid(
                    data["kind"],
                    data["domain"],
                    data["task"],
                    tuple(data["columns"]),
                    tuple(data["rows"]),
                    str(data.get("shows", "outputs")),
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(grids, key=lambda g: (g.kind, g.domain, g.task))


def grids_by_weight(grids: Sequence[ExampleGrid], scores: Sequence[Mapping[str, Any]]) -> list[ExampleGrid]:
    """``grids`` in their order, except that within a kind and domain the tasks with at least half
    as many scores as the most-scored task come first: the tasks every suite scores are shown
    before those one test looks at (e.g. randomisation stages)."""
    counts = Counter((s.get("kind"), s.get("domain"), s.get("task")) for s in scores)
    most: dict[tuple[str, str], int] = {}
    for grid in grids:
        most[(grid.kind, grid.domain)] = max(
            most.get((grid.kind, grid.domain), 0), counts[(grid.kind, grid.domain, grid.task)]
        )

    def minor(grid: ExampleGrid) -> bool:
        return 2 * counts[(grid.kind, grid.domain, grid.task)] < most[(grid.kind, grid.domain)]

    return sorted(grids, key=lambda grid: (grid.kind, grid.domain, minor(grid)))


def clear_examples(run_dir: Path) -> None:
    """Remove a previous run's grids (called once per run, before any task is generated)."""
    shutil.rmtree(Path(run_dir) / EXAMPLES_DIR, ignore_errors=True)


def examples_heading(grids: Sequence[ExampleGrid]) -> str:
    """The examples section's title, by what the grids show: "Example counterfactuals", "Example
    saliency maps", "Example counterfactuals and saliency maps"."""
    shown = list(dict.fromkeys(grid.shows for grid in grids)) or ["outputs"]
    return "Example " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1])


#: a vector's heat strip: pixels per coordinate (wide) and the strip's height
STRIP_CELL, STRIP_HEIGHT = 4, 12


def _png(image: torch.Tensor, column: str) -> bytes:
    from PIL import Image

    if image.ndim == 1:  # a vector: one cell per coordinate
        values = image.numpy()[None, :]
        # |value| scaled to its maximum, as an image's map; signed values on a diverging scale
        array = _magnitude(np.abs(values)) if column in MAP_COLUMNS else _diverging(values)
        array = np.repeat(np.repeat(array, STRIP_HEIGHT, axis=0), STRIP_CELL, axis=1)
    elif image.ndim != 3:
        raise ValueError(f"example images must be C×H×W (or a D vector), got shape {tuple(image.shape)}")
    elif column in SIGNED_COLUMNS:
        array = _diverging(image.mean(0).numpy())
    elif column in MAP_COLUMNS:
        array = _magnitude(image.abs().sum(0).numpy())
    else:
        pixels = image.clamp(0, 1).numpy()
        pixels = pixels[0] if pixels.shape[0] == 1 else np.moveaxis(pixels[:3], 0, -1)
        array = (pixels * 255).round().astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _magnitude(magnitude: np.ndarray) -> np.ndarray:
    """Non-negative values → grey levels, scaled to their maximum (all black when all are 0)."""
    peak = float(magnitude.max())
    return (np.clip(magnitude / peak if peak > 0 else magnitude, 0, 1) * 255).round().astype(np.uint8)


def _diverging(delta: np.ndarray) -> np.ndarray:
    """Signed change → RGB: white at 0, red for increases, blue for decreases, scaled to the
    image's largest |change| (an unchanged image is white)."""
    peak = float(np.abs(delta).max())
    scaled = delta / peak if peak > 0 else delta
    red = np.where(scaled < 0, 1 + scaled, 1.0)
    blue = np.where(scaled > 0, 1 - scaled, 1.0)
    green = 1 - np.abs(scaled)
    return (np.stack([red, green, blue], axis=-1) * 255).round().astype(np.uint8)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "task"
