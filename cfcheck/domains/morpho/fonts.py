"""Font discovery and the per-(font, digit) signed-distance-field bank.

The morpho renderer never rasterises text per sample: each glyph is rasterised once at high
resolution, turned into a signed distance field (SDF) and cached. Samples are then produced by
warping and thresholding these fields (see ``rendering.py``), which is what makes stroke thickness an
exact, continuous parameter and generation fast.

The usable fonts and the bank depend only on this file and the font files, so both are kept on
disk (:func:`cfcheck.cache.memoise_on_disk`, keyed by digests of both): a session loads them in
milliseconds instead of rasterising for seconds. PIL and scipy are imported only to build them.
"""

from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np
import torch

from cfcheck.cache import file_digest, memoise_on_disk


def _matplotlib_font_dir() -> str:
    """matplotlib's bundled TrueType folder, found without importing matplotlib (slow)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the morpho domain draws its digits with matplotlib's bundled fonts; install matplotlib")
    return os.path.join(list(spec.submodule_search_locations)[0], "mpl-data", "fonts", "ttf")


FONT_DIR = _matplotlib_font_dir()

#: Output canvas side in pixels (images are 1×CANVAS×CANVAS).
CANVAS = 32
#: Longest side of a normalised glyph in output pixels (MNIST puts digits in a 20-pixel box).
GLYPH_BOX = 20.0
#: Resolution of the cached SDF bank, in bank pixels per output pixel.
BANK_RESOLUTION = 4
#: Rasterisation resolution used to build the SDF (pooled down to ``BANK_RESOLUTION``).
_RASTER_RESOLUTION = 8
_RASTER_FONT_SIZE = 400

_DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _rasterise(path: str, char: str, size: int = _RASTER_FONT_SIZE) -> np.ndarray:
    """Greyscale raster (uint8) of one character, cropped to its ink bounding box."""
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


def _maps_digits_to_digit_glyphs(path: str) -> bool:
    """True when code points '0'..'9' map to glyphs named as digits in the font's cmap.

    TeX symbol fonts (cmsy10, cmex10) put arbitrary symbols at these code points and would pass an
    ink-only check; glyph names expose them. Old-style figures ("zerooldstyle") are accepted.
    """
    from fontTools.ttLib import TTFont  # matplotlib dependency; imported lazily

    cmap = TTFont(path, lazy=True).getBestCmap() or {}
    for digit, name in enumerate(_DIGIT_NAMES):
        glyph = cmap.get(0x30 + digit)
        if glyph is None or not (glyph.startswith(name) or glyph == f"uni{0x30 + digit:04X}"):
            return False
    return True


def is_usable_font(path: str) -> bool:
    """Deterministic legibility check: digit glyphs exist, all ten carry ink, all are distinct."""
    try:
        if not _maps_digits_to_digit_glyphs(path):
            return False
        glyphs = [_rasterise(path, str(d), size=48) > 127 for d in range(10)]
    except OSError:
        return False
    if any(g.sum() == 0 for g in glyphs):
        return False
    return all(
        g.shape != h.shape or not np.array_equal(g, h)
        for i, g in enumerate(glyphs)
        for h in glyphs[i + 1 :]
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

    text = bytes(memoise_on_disk("morpho.fonts", compute, **FONT_SOURCES)["names"].tolist()).decode()
    return tuple(text.split("\n")) if text else ()


FONTS: tuple[str, ...] = _cached_fonts()


def _glyph_sdf(path: str, digit: int) -> tuple[np.ndarray, float]:
    """SDF (output-pixel units, positive inside) on the bank grid, and the glyph's stroke width.

    The glyph is scaled so its longer side is ``GLYPH_BOX`` output pixels and centred by its
    bounding box. Stroke width is 4 × the mean inside distance to the edge: across a stroke of
    width w the distance rises linearly to w/2 and falls back, averaging w/4. Unlike
    2·area/perimeter it hardly feels stroke ends and serifs, which inflate the perimeter.
    """
    from PIL import Image
    from scipy import ndimage

    raster = Image.fromarray(_rasterise(path, str(digit)))
    factor = GLYPH_BOX * _RASTER_RESOLUTION / max(raster.size)
    width = max(1, round(raster.size[0] * factor))
    height = max(1, round(raster.size[1] * factor))
    glyph = np.asarray(raster.resize((width, height), Image.Resampling.LANCZOS))
    side = CANVAS * _RASTER_RESOLUTION
    canvas = np.zeros((side, side), dtype=np.uint8)
    top, left = (side - height) // 2, (side - width) // 2
    canvas[top : top + height, left : left + width] = glyph
    inside = canvas >= 128
    sdf = np.where(
        inside,
        ndimage.distance_transform_edt(inside) - 0.5,
        -(ndimage.distance_transform_edt(~inside) - 0.5),
    ) / _RASTER_RESOLUTION
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
        return {"bank": torch.from_numpy(np.stack(fields)).unsqueeze(1),
                "widths": torch.tensor(widths, dtype=torch.float32)}

    stored = memoise_on_disk("morpho.glyph_bank", compute, fonts="\n".join(FONTS), **FONT_SOURCES)
    return stored["bank"], stored["widths"]
