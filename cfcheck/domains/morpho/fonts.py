"""Font discovery and the per-(font, digit) signed-distance-field bank.

The morpho renderer never rasterises text per sample: each glyph is rasterised once at high
resolution, turned into a signed distance field (SDF) and cached. Samples are then produced by
warping and thresholding these fields (see ``rendering.py``), which is what makes stroke thickness an
exact, continuous parameter and generation fast.

The usable fonts and the bank depend only on this file, `cfcheck/domains/truetype.py` and the font files, so both are kept on
disk (:func:`cfcheck.core.cache.memoise_on_disk`, keyed by digests of both): a session loads them in
milliseconds instead of rasterising for seconds. PIL and scipy are imported only to build them.
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

#: Output canvas side in pixels (images are 1×CANVAS×CANVAS).
CANVAS = 32
#: Longest side of a normalised glyph in output pixels (MNIST puts digits in a 20-pixel box).
GLYPH_BOX = 20.0
#: Resolution of the cached SDF bank, in bank pixels per output pixel.
BANK_RESOLUTION = 4
#: Rasterisation resolution used to build the SDF (pooled down to ``BANK_RESOLUTION``).
_RASTER_RESOLUTION = 8
_RASTER_FONT_SIZE = 400
DIGITS = "0123456789"

#: What the fonts and the bank are computed from: this file, the shared TrueType code and every
#: candidate font file.
FONT_SOURCES = {"code": file_digest(__file__, truetype.__file__), "font_files": FONT_FILES_DIGEST}

#: The fonts that draw the ten digits legibly (22 of matplotlib's), sorted by file name.
FONTS: tuple[str, ...] = cached_usable_fonts("morpho.fonts", DIGITS, FONT_SOURCES["code"])


def _glyph_sdf(path: str, digit: int) -> tuple[np.ndarray, float]:
    """SDF (output-pixel units, positive inside) on the bank grid, and the glyph's stroke width.

    The glyph is scaled so its longer side is ``GLYPH_BOX`` output pixels and centred by its
    bounding box. Stroke width is 4 × the mean inside distance to the edge: across a stroke of
    width w the distance rises linearly to w/2 and falls back, averaging w/4. Unlike
    2·area/perimeter it hardly feels stroke ends and serifs, which inflate the perimeter.
    """
    from scipy import ndimage

    side = CANVAS * _RASTER_RESOLUTION
    raster = rasterise_character(path, str(digit), _RASTER_FONT_SIZE)
    inside = centred_glyph(raster, GLYPH_BOX * _RASTER_RESOLUTION, side) >= 128
    sdf = (
        np.where(
            inside,
            ndimage.distance_transform_edt(inside) - 0.5,
            -(ndimage.distance_transform_edt(~inside) - 0.5),
        )
        / _RASTER_RESOLUTION
    )
    stroke_width = 4.0 * float(sdf[inside].mean())
    pool = _RASTER_RESOLUTION // BANK_RESOLUTION
    pooled = sdf.reshape(side // pool, pool, side // pool, pool).mean(axis=(1, 3))
    return pooled.astype(np.float32), stroke_width


@functools.lru_cache(maxsize=1)
def glyph_bank() -> tuple[torch.Tensor, torch.Tensor]:
    """All glyph SDFs as a (len(FONTS)·10)×1×H×W tensor (row = font·10 + digit) and their widths."""

    def compute() -> dict[str, torch.Tensor]:
        fields, widths = [], []
        for name in FONTS:
            for digit in range(10):
                field, width = _glyph_sdf(os.path.join(FONT_DIR, name), digit)
                fields.append(field)
                widths.append(width)
        return {
            "bank": torch.from_numpy(np.stack(fields)).unsqueeze(1),
            "widths": torch.tensor(widths, dtype=torch.float32),
        }

    stored = memoise_on_disk("morpho.glyph_bank", compute, fonts="\n".join(FONTS), **FONT_SOURCES)
    return stored["bank"], stored["widths"]
