"""Characters drawn with the TrueType fonts that ship inside matplotlib, for the domains that
render text (nothing is downloaded).

One place finds the font folder, rasterises a character, decides which fonts can draw a given
character set legibly, and centres a glyph on a bank canvas; each domain builds its own bank
(signed distance fields, coverage maps, …) from these. Font discovery is kept on disk
(:func:`cfcheck.core.cache.memoise_on_disk`) keyed by the caller's code digest and the font files.
PIL and fontTools (a matplotlib dependency) are imported only when something is rasterised.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import torch

from cfcheck.core.cache import file_digest, memoise_on_disk

__all__ = [
    "FONT_DIR",
    "FONT_FILES_DIGEST",
    "cached_usable_fonts",
    "centred_glyph",
    "discover_fonts",
    "is_usable_font",
    "rasterise_character",
]

_DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _matplotlib_font_dir() -> str:
    """matplotlib's bundled TrueType folder, found without importing matplotlib (slow)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("cfcheck draws its characters with matplotlib's bundled fonts; install matplotlib")
    return os.path.join(list(spec.submodule_search_locations)[0], "mpl-data", "fonts", "ttf")


FONT_DIR = _matplotlib_font_dir()


def _ttf_files(font_dir: str) -> list[str]:
    return sorted(os.path.join(font_dir, n) for n in os.listdir(font_dir) if n.lower().endswith(".ttf"))


#: Digest of every candidate font file: part of the key of anything derived from the fonts.
FONT_FILES_DIGEST = file_digest(*_ttf_files(FONT_DIR))


def rasterise_character(path: str, char: str, size: int) -> np.ndarray:
    """Greyscale coverage (uint8) of one character of the font at ``path`` drawn at ``size``
    points, cropped to its ink (a 0×0 array when the glyph has no ink)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(path, size)
    canvas = Image.new("L", (3 * size, 3 * size), 0)
    ImageDraw.Draw(canvas).text((size, size), char, font=font, fill=255)
    array = np.asarray(canvas)
    rows = np.flatnonzero(array.max(axis=1) > 0)
    cols = np.flatnonzero(array.max(axis=0) > 0)
    if rows.size == 0:
        return np.zeros((0, 0), dtype=np.uint8)
    return array[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _glyph_name_matches(char: str, glyph: str | None) -> bool:
    """Whether a cmap glyph name is the character itself: "A" for A, "two" or "twooldstyle" for
    2, or the generic "uni" + the code point in four hex digits."""
    if glyph is None:
        return False
    if glyph == f"uni{ord(char):04X}":
        return True
    return glyph.startswith(_DIGIT_NAMES[int(char)]) if char.isdigit() else glyph == char


def _maps_every_character(path: str, characters: str) -> bool:
    """True when every character's code point maps to a glyph named as that character. TeX
    symbol fonts (cmsy10, cmex10) put arbitrary symbols at these code points ("a" →
    "turnstileright") and would pass an ink-only check; glyph names expose them."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(path, lazy=True).getBestCmap() or {}
    return all(_glyph_name_matches(char, cmap.get(ord(char))) for char in characters)


def is_usable_font(path: str, characters: str) -> bool:
    """Deterministic legibility check: every character is mapped to its own glyph, carries ink
    and rasterises (48 points, thresholded) differently from every other one."""
    try:
        if not _maps_every_character(path, characters):
            return False
        glyphs = [rasterise_character(path, char, size=48) > 127 for char in characters]
    except OSError:
        return False
    if any(glyph.sum() == 0 for glyph in glyphs):
        return False
    return all(g.shape != h.shape or not np.array_equal(g, h) for i, g in enumerate(glyphs) for h in glyphs[i + 1 :])


def discover_fonts(characters: str, font_dir: str = FONT_DIR) -> tuple[str, ...]:
    """Usable ``*.ttf`` file names in ``font_dir`` for ``characters``, sorted by name so indices
    are stable."""
    return tuple(os.path.basename(p) for p in _ttf_files(font_dir) if is_usable_font(p, characters))


def cached_usable_fonts(name: str, characters: str, code: str) -> tuple[str, ...]:
    """:func:`discover_fonts` for ``characters``, kept on disk under ``name`` and keyed by the
    caller's ``code`` digest, this module's and the font files'."""

    def compute() -> dict[str, torch.Tensor]:
        text = "\n".join(discover_fonts(characters)).encode()
        return {"names": torch.tensor(list(text), dtype=torch.uint8)}

    stored = memoise_on_disk(
        name, compute, code=code, truetype=file_digest(__file__), font_files=FONT_FILES_DIGEST, characters=characters
    )
    text = bytes(stored["names"].tolist()).decode()
    return tuple(text.split("\n")) if text else ()


def centred_glyph(raster: np.ndarray, longer_side: float, side: int) -> np.ndarray:
    """``raster`` (uint8, cropped to its ink) resized with Lanczos so its longer side is
    ``longer_side`` pixels, centred by its bounding box on a zero ``side``×``side`` canvas."""
    from PIL import Image

    image = Image.fromarray(raster)
    factor = longer_side / max(image.size)
    width = max(1, round(image.size[0] * factor))
    height = max(1, round(image.size[1] * factor))
    glyph = np.asarray(image.resize((width, height), Image.Resampling.LANCZOS))
    canvas = np.zeros((side, side), dtype=np.uint8)
    top, left = (side - height) // 2, (side - width) // 2
    canvas[top : top + height, left : left + width] = glyph
    return canvas
