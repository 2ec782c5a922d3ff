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
(:func:`cfcheck.core.cache.memoise_on_disk`, keyed by digests of both).
"""

from __future__ import annotations

import functools
import os

import numpy as np
import torch

from cfcheck.core.cache import file_digest, memoise_on_disk
from cfcheck.domains import truetype
from cfcheck.domains.truetype import (
    FONT_DIR,
    FONT_FILES_DIGEST,
    cached_usable_fonts,
    centred_glyph,
    rasterise_character,
)

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


#: What the fonts and the bank are computed from: this file, the shared TrueType code and every
#: candidate font file.
FONT_SOURCES = {"code": file_digest(__file__, truetype.__file__), "font_files": FONT_FILES_DIGEST}

#: The usable font file names (22 with matplotlib's bundled fonts); index = font class.
FONTS: tuple[str, ...] = cached_usable_fonts("glyphs.fonts", CHARACTERS, FONT_SOURCES["code"])
NUM_FONTS = len(FONTS)


def _bank_coverage(path: str, char: str) -> np.ndarray:
    """The glyph's coverage (uint8) on the bank canvas: longer side BANK_GLYPH_FRACTION of it,
    centred by the ink bounding box."""
    side = CANVAS * BANK_RESOLUTION
    return centred_glyph(rasterise_character(path, char, _RASTER_FONT_SIZE), BANK_GLYPH_FRACTION * side, side)


@functools.lru_cache(maxsize=1)
def glyph_bank() -> torch.Tensor:
    """All glyphs' coverage as a uint8 (NUM_FONTS·48)×1×S×S tensor, S = CANVAS·BANK_RESOLUTION;
    row = font·48 + character."""

    def compute() -> dict[str, torch.Tensor]:
        maps = [_bank_coverage(os.path.join(FONT_DIR, name), char) for name in FONTS for char in CHARACTERS]
        return {"bank": torch.from_numpy(np.stack(maps)).unsqueeze(1)}

    return memoise_on_disk("glyphs.bank", compute, fonts="\n".join(FONTS), characters=CHARACTERS, **FONT_SOURCES)[
        "bank"
    ]
