"""Model cards: one Markdown page per reference model, generated from its manifest entry.

Generated rather than hand-written so a card can never disagree with the weights it
describes; ``cfcheck retrain`` rewrites them together with the manifest.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cfcheck.core.io import atomic_write_text
from cfcheck.core.thresholds import Bars

__all__ = ["model_card_markdown", "write_model_cards"]

_REQUIRED = ("file", "sha256", "architecture", "arch_kwargs", "role", "training", "data", "quality", "quality_bar")


def _format_value(value: Any) -> str:
    if value is None:
        return "— (all)"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (dict, list)):
        return f"`{json.dumps(value, sort_keys=True)}`"
    return str(value)


def _bar_text(bounds: dict[str, float]) -> str:
    return Bars.from_dict(bounds).describe() if bounds else ""


def _calibration_lines(calibration: dict[str, Any] | None) -> list[str]:
    if not calibration:
        return []
    balanced = " and class-balanced (per-class bias)" if calibration.get("balance") else ""
    return [
        f"Logits standardised per class{balanced} on the first {calibration['n']} images of "
        f"split `{calibration.get('split', '?')}`, labels unused (buffers "
        "`logit_standardisation.mean/std/bias` in the weights file).",
        "",
    ]


def _notes_lines(notes: list[str] | None) -> list[str]:
    if not notes:
        return []
    return ["## Notes", "", *[f"- {note}" for note in notes], ""]


def _interface_text(entry: dict[str, Any]) -> str:
    if entry.get("interface"):  # a generative model describes its own inputs and outputs
        return str(entry["interface"])
    outputs = (
        "64-d features (training heads kept in the module)"
        if entry["role"] == "embedding"
        else f"{entry.get('num_classes', '?')} logits"
    )
    return f"outputs {outputs}. Input: images in [0, 1], N×1×32×32 (normalisation inside the module)."


def model_card_markdown(entry: dict[str, Any]) -> str:
    """The Markdown card of one manifest entry (purpose, architecture, data, recipe, quality)."""
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise ValueError(f"manifest entry lacks {missing}; expected the keys {list(_REQUIRED)}")
    # without explicit keys, both come from the file name, "<domain>_<name>.safetensors"
    stem = Path(entry["file"]).stem
    domain = entry.get("domain", stem.split("_", 1)[0])
    name = entry.get("name", stem.split("_", 1)[-1])
    data = entry["data"]
    recipe = entry["training"]
    lines = [
        f"# {domain}/{name}",
        "",
        f"**Purpose.** {entry.get('purpose', '')} (role: `{entry['role']}`"
        + (f", attribute: `{entry['attribute']}`" if entry.get("attribute") else "")
        + ").",
        "",
        "## Architecture",
        "",
        f"`{entry['architecture']}` with `{json.dumps(entry['arch_kwargs'], sort_keys=True)}`; "
        f"{entry.get('parameters', '?'):,} parameters; " + _interface_text(entry),
        "",
        *_calibration_lines(entry.get("logit_calibration")),
        "## Data",
        "",
        f"Split `{data['split']}` of the {domain} domain: {data['n']} images"
        + (f", split seed {data['seed']}" if "seed" in data else "")
        + (
            f"; model selection on `{recipe['selection_split']}` ({recipe.get('select_on')})"
            if recipe.get("selection_split")
            else ""
        )
        + "; quality measured on `test`.",
        "",
        "## Training recipe",
        "",
        "| setting | value |",
        "|---|---|",
        *[f"| {key} | {_format_value(value)} |" for key, value in sorted(recipe.items())],
        "",
        f"Trained on {entry.get('trained_on', '?')}"
        + (f" ({entry['num_threads']} thread(s))" if "num_threads" in entry else "")
        + f" with torch {entry.get('torch_version', '?')}"
        + (f" in {entry['train_seconds']:.0f} s" if "train_seconds" in entry else "")
        + ".",
        "",
        "## Measured quality (test split)",
        "",
        "| metric | value | bar |",
        "|---|---|---|",
        *[
            f"| {key} | {_format_value(value)} | {_bar_text(entry['quality_bar'].get(key, {}))} |"
            for key, value in sorted(entry["quality"].items())
        ],
        "",
        *_notes_lines(entry.get("notes")),
        "## Integrity and retraining",
        "",
        f"Weights: `{entry['file']}` (safetensors), sha256 `{entry['sha256']}`, verified on every "
        "load. Retrain deterministically with",
        "",
        "```",
        f"cfcheck retrain --domain {domain} --only {name}",
        "```",
        "",
    ]
    return "\n".join(lines)


def write_model_cards(manifest: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Writes ``<domain>_<name>.md`` beside the weights for every manifest entry."""
    out_dir = Path(out_dir)
    written = []
    for key, entry in sorted(manifest["models"].items()):
        domain, name = key.split("/", 1)
        entry = {"domain": domain, "name": name, **entry}
        path = out_dir / f"{domain}_{name}.md"
        atomic_write_text(path, model_card_markdown(entry))
        written.append(path)
    return written
