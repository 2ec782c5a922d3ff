"""The 48 characters, the usable fonts and the per-(font, character) coverage bank.

Characters are drawn with the TrueType fonts that ship inside matplotlib, so nothing is
downloaded. A font is usable when every one of the 48 characters maps to a glyph in its
character map, carries ink, and no two characters rasterise identically (TeX symbol fonts,
which put arbitrary symbols at these code points, fail the last check or the first).

Each glyph is rasterised once, at high resolution, with PIL, scaled so that its longer side is
``BANK_GLYPH_FRACTION`` of the bank canvas and centred by its ink bounding box; the resulting
coverage maps (uint8) are the *bank*. Samples are produced from the bank by an affine warp (see
``rendering.py``), never by rasterising text per sample. The font list and the bank depend
only on this file and the font files, so both are kept on disk
(:func:`cfcheck.cache.memoise_on_disk`, keyed by digests of both).
"""

from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np
import torch

from cfcheck.cache import file_digest, memoise_on_disk

#: The 48 characters: digits and letters of both cases less the shapes one could confuse (0/O,
#: 1/I/l, and the lowercase letters that are their capital made small: c o p s u v w x z).
#: Index = class of the character; its parity (index mod 2) is the causal label.
CHARACTERS = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabdefghijkmnqrty"
NUM_CHARACTERS = len(CHARACTERS)

#: Output canvas side in pixels (images are 1×CANVAS×CANVAS).
CANVAS = 32
#: Bank pixels per output pixel at scale 1 of the bank canvas (the bank is CANVAS·BANK_RESOLUTION wide).
BANK_RESOLUTION = 4
#: The glyph's longer side as a fraction of the bank canvas (room for rotation without clipping).
BANK_GLYPH_FRACTION = 0.5
_RASTER_FONT_SIZE = 256


def _matplotlib_font_dir() -> str:
    """matplotlib's bundled TrueType folder, found without importing matplotlib (slow)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the glyph domain draws its characters with matplotlib's bundled fonts; install matplotlib")
    return os.path.join(list(spec.submodule_search_locations)[0], "mpl-data", "fonts", "ttf")


FONT_DIR = _matplotlib_font_dir()


def rasterise_character(path: str, char: str, size: int = _RASTER_FONT_SIZE) -> np.ndarray:
    """Greyscale coverage (uint8) of one character of the font at ``path``, cropped to its ink
    (a 0×0 array when the glyph has no ink)."""
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


_DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _glyph_name_matches(char: str, glyph: str | None) -> bool:
    """Whether a cmap glyph name is the character itself: "A" for A, "two" or "twooldstyle" for
    2, or the generic "uniXXXX"."""
    if glyph is None:
        return False
    if glyph == f"uni{ord(char):04X}":
        return True
    return glyph.startswith(_DIGIT_NAMES[int(char)]) if char.isdigit() else glyph == char


def _maps_every_character(path: str) -> bool:
    """True when every character's code point maps to a glyph named as that character. TeX
    symbol fonts (cmsy10) map letters' code points to symbols ("a" → "turnstileright") and
    would pass an ink-only check; glyph names expose them."""
    from fontTools.ttLib import TTFont  # a matplotlib dependency; imported lazily

    cmap = TTFont(path, lazy=True).getBestCmap() or {}
    return all(_glyph_name_matches(char, cmap.get(ord(char))) for char in CHARACTERS)


def is_usable_font(path: str) -> bool:
    """Deterministic legibility check: all 48 characters are mapped, carry ink and are distinct."""
    try:
        if not _maps_every_character(path):
            return False
        glyphs = [rasterise_character(path, char, size=48) > 127 for char in CHARACTERS]
    except OSError:
        return False
    if any(glyph.sum() == 0 for glyph in glyphs):
        return False
    return all(
        g.shape != h.shape or not np.array_equal(g, h) for i, g in enumerate(glyphs) for h in glyphs[i + 1 :]
    )


def discover_fonts(font_dir: str = FONT_DIR) -> tuple[str, ...]:
    """Usable ``*.ttf`` file names in ``font_dir``, sorted by name so indices are stable."""
    names = sorted(n for n in os.listdir(font_dir) if n.lower().endswith(".ttf"))
    return tuple(n for n in names if is_usable_font(os.path.join(font_dir, n)))


def _ttf_files(font_dir: str) -> list[str]:
    return sorted(os.path.join(font_dir, n) for n in os.listdir(font_dir) if n.lower().endswith(".ttf"))


#: What the fonts and the bank are computed from: this file and every candidate font file.
FONT_SOURCES = {"code": file_digest(__file__), "font_files": file_digest(*_ttf_files(FONT_DIR))}


def _cached_fonts() -> tuple[str, ...]:
    def compute() -> dict[str, torch.Tensor]:
        text = "\n".join(discover_fonts()).encode()
        return {"names": torch.tensor(list(text), dtype=torch.uint8)}

    text = bytes(memoise_on_disk("glyphs.fonts", compute, **FONT_SOURCES)["names"].tolist()).decode()
    return tuple(text.split("\n")) if text else ()


#: The usable font file names (22 with matplotlib's bundled fonts); index = font class.
FONTS: tuple[str, ...] = _cached_fonts()
NUM_FONTS = len(FONTS)


def _bank_coverage(path: str, char: str) -> np.ndarray:
    """The glyph's coverage (uint8) on the bank canvas: longer side BANK_GLYPH_FRACTION of it,
    centred by the ink bounding box."""
    from PIL import Image

    raster = Image.fromarray(rasterise_character(path, char))
    side = CANVAS * BANK_RESOLUTION
    factor = BANK_GLYPH_FRACTION * side / max(raster.size)
    width = max(1, round(raster.size[0] * factor))
    height = max(1, round(raster.size[1] * factor))
    glyph = np.asarray(raster.resize((width, height), Image.Resampling.LANCZOS))
    canvas = np.zeros((side, side), dtype=np.uint8)
    top, left = (side - height) // 2, (side - width) // 2
    canvas[top : top + height, left : left + width] = glyph
    return canvas


@functools.lru_cache(maxsize=1)
def glyph_bank() -> torch.Tensor:
    """All glyphs' coverage as a uint8 (NUM_FONTS·48)×1×S×S tensor, S = CANVAS·BANK_RESOLUTION;
    row = font·48 + character."""

    def compute() -> dict[str, torch.Tensor]:
        maps = [_bank_coverage(os.path.join(FONT_DIR, name), char) for name in FONTS for char in CHARACTERS]
        return {"bank": torch.from_numpy(np.stack(maps)).unsqueeze(1)}

    return memoise_on_disk("glyphs.bank", compute, fonts="\n".join(FONTS), characters=CHARACTERS,
                           **FONT_SOURCES)["bank"]
