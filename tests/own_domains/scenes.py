"""Procedural scenes: every image is rendered from its class and a row of exogenous style
parameters, so the true counterfactual of an image under do(class = t) is the same row rendered
with class t.

A style row ends with two columns every scene shares: the noise level and the seed of the
image's pixel noise, so the noise is part of the exogenous style too (the truth keeps it).
Rendering is pure NumPy, supersampled 4× per axis for anti-aliased edges, and deterministic.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

#: subsamples per pixel and axis (anti-aliasing)
SUPERSAMPLE = 4
#: the two style columns every scene ends with
NOISE_COLUMNS = ("noise_sigma", "noise_seed")

Array = np.ndarray


def grid(height: int, width: int) -> tuple[Array, Array]:
    """Subsample centres (y, x), each (height·S)×(width·S), in pixel units."""
    ys = (np.arange(height * SUPERSAMPLE) + 0.5) / SUPERSAMPLE
    xs = (np.arange(width * SUPERSAMPLE) + 0.5) / SUPERSAMPLE
    return np.meshgrid(ys, xs, indexing="ij")


def pool(mask: Array, height: int, width: int) -> Array:
    """Average a supersampled mask (or image, channels last) down to height×width."""
    shape = (height, SUPERSAMPLE, width, SUPERSAMPLE, *mask.shape[2:])
    return mask.reshape(shape).mean(axis=(1, 3))


def distinct_colours(rng: np.random.Generator, n: int, gap: float) -> tuple[Array, Array]:
    """Two RGB colours per row whose Euclidean distance is at least ``gap``."""
    first, second = rng.random((n, 3)), rng.random((n, 3))
    for _ in range(1000):
        close = np.linalg.norm(first - second, axis=1) < gap
        if not close.any():
            break
        second[close] = rng.random((int(close.sum()), 3))
    return first, second


class Scene(ABC):
    """One domain's generator: classes, image size and the style parameters of an image."""

    name: str
    channels: int
    height: int
    width: int
    class_names: tuple[str, ...]
    per_class: int
    #: images per class rendered on top of a training split (never part of the domain's data)
    extra_per_class: int
    style_names: tuple[str, ...]

    @abstractmethod
    def sample_styles(self, rng: np.random.Generator, n: int) -> Array:
        """``n`` style rows (float64 n×P, the columns of :attr:`style_names` but the noise ones)."""

    @abstractmethod
    def draw(self, label: int, style: Array) -> Array:
        """The noiseless image of class ``label`` with ``style``: float H×W×C in [0, 1]."""

    def styles(self, rng: np.random.Generator, n: int, first_seed: int) -> Array:
        """Full style rows: the scene's own columns, a noise level and a per-image noise seed."""
        own = self.sample_styles(rng, n)
        sigma = rng.uniform(0.015, 0.04, n)
        seeds = first_seed + np.arange(n, dtype=np.float64)
        return np.column_stack([own, sigma, seeds])

    def render(self, labels: Array, styles: Array) -> Array:
        """uint8 N×C×H×W images of ``labels`` with ``styles`` (rows as :meth:`styles` makes)."""
        out = np.empty((len(labels), self.channels, self.height, self.width), dtype=np.uint8)
        for row, (label, style) in enumerate(zip(np.asarray(labels).tolist(), np.asarray(styles))):
            clean = self.draw(int(label), style[:-2])
            noise = np.random.default_rng(int(style[-1])).normal(0.0, style[-2], clean.shape)
            pixels = np.clip(np.rint((clean + noise) * 255.0), 0, 255).astype(np.uint8)
            out[row] = np.moveaxis(pixels, -1, 0)
        return out

    def dataset(self, seed: int = 0, per_class: int | None = None) -> tuple[Array, Array, Array]:
        """Images (uint8), labels (int64, in class blocks) and style rows: the domain's own with
        seed 0 and :attr:`per_class` images per class."""
        rng = np.random.default_rng(seed)
        count = self.per_class if per_class is None else per_class
        labels = np.repeat(np.arange(len(self.class_names), dtype=np.int64), count)
        styles = self.styles(rng, len(labels), first_seed=1_000_003 * (seed + 1))
        return self.render(labels, styles), labels, styles


class Shapes(Scene):
    """RGB 32×32: a disc, a square or a triangle of equal area, in a random colour, position,
    size and tilt (±17°), over a random background colour."""

    name, channels, height, width = "shapes", 3, 32, 32
    class_names = ("disc", "square", "triangle")
    per_class, extra_per_class = 680, 500
    style_names = ("bg_r", "bg_g", "bg_b", "fg_r", "fg_g", "fg_b", "cx", "cy", "size", "angle", *NOISE_COLUMNS)

    def sample_styles(self, rng: np.random.Generator, n: int) -> Array:
        background, foreground = distinct_colours(rng, n, gap=0.55)
        centre = rng.uniform(12.0, 20.0, (n, 2))
        return np.column_stack([background, foreground, centre, rng.uniform(6.0, 8.0, n), rng.uniform(-0.3, 0.3, n)])

    def draw(self, label: int, style: Array) -> Array:
        background, foreground, (cx, cy, size, angle) = style[0:3], style[3:6], style[6:10]
        ys, xs = grid(self.height, self.width)
        cos, sin = math.cos(angle), math.sin(angle)
        u = cos * (xs - cx) + sin * (ys - cy)
        v = -sin * (xs - cx) + cos * (ys - cy)
        if label == 0:  # disc of radius `size`
            inside = u**2 + v**2 <= size**2
        elif label == 1:  # square of the disc's area
            half = size * math.sqrt(math.pi) / 2.0
            inside = np.maximum(np.abs(u), np.abs(v)) <= half
        else:  # equilateral triangle of the disc's area: inradius R/2 from three edges
            radius = size * math.sqrt(4.0 * math.pi / (3.0 * math.sqrt(3.0)))
            inside = np.ones_like(u, dtype=bool)
            for k in range(3):
                normal = math.pi / 2 + 2 * math.pi * k / 3
                inside &= u * math.cos(normal) + v * math.sin(normal) <= radius / 2
        alpha = pool(inside.astype(np.float64), self.height, self.width)[..., None]
        return background * (1.0 - alpha) + foreground * alpha


class Bars(Scene):
    """Grey 28×20 (taller than wide): a bright bar whose orientation is the class (0°, 36°, 72°,
    108°, 144° with ±5° jitter), of random length, width, position and brightness, and a dim
    distractor blob."""

    name, channels, height, width = "bars", 1, 28, 20
    class_names = ("deg000", "deg036", "deg072", "deg108", "deg144")
    per_class, extra_per_class = 400, 120
    style_names = ("cx", "cy", "length", "thickness", "jitter", "fg", "bg", "blob_x", "blob_y", *NOISE_COLUMNS)

    def sample_styles(self, rng: np.random.Generator, n: int) -> Array:
        return np.column_stack(
            [
                rng.uniform(8.0, 12.0, n),
                rng.uniform(11.0, 17.0, n),
                rng.uniform(12.0, 17.0, n),
                rng.uniform(2.0, 3.5, n),
                rng.uniform(-5.0, 5.0, n),
                rng.uniform(0.6, 1.0, n),
                rng.uniform(0.0, 0.25, n),
                rng.uniform(2.0, 18.0, n),
                rng.uniform(2.0, 26.0, n),
            ]
        )

    def draw(self, label: int, style: Array) -> Array:
        cx, cy, length, thickness, jitter, fg, bg, blob_x, blob_y = style
        angle = math.radians(36.0 * label + jitter)
        ys, xs = grid(self.height, self.width)
        along = math.cos(angle) * (xs - cx) - math.sin(angle) * (ys - cy)
        across = math.sin(angle) * (xs - cx) + math.cos(angle) * (ys - cy)
        bar = (np.abs(along) <= length / 2) & (np.abs(across) <= thickness / 2)
        blob = (xs - blob_x) ** 2 + (ys - blob_y) ** 2 <= 2.0**2
        alpha = pool(bar.astype(np.float64), self.height, self.width)
        dim = pool(blob.astype(np.float64), self.height, self.width)
        image = bg + (0.3 * (fg - bg)) * dim
        return (image * (1.0 - alpha) + fg * alpha)[..., None]


class Textures(Scene):
    """RGB 40×40: a disc patch of random position and size filled with a two-colour texture; the
    texture is the class (horizontal stripes, vertical stripes, checks, dots), its period, phase,
    tilt and colours are style, over a background of a random colour and gradient."""

    name, channels, height, width = "textures", 3, 40, 40
    class_names = ("hstripes", "vstripes", "checks", "dots")
    per_class, extra_per_class = 500, 150
    style_names = (
        *("bg_r", "bg_g", "bg_b", "a_r", "a_g", "a_b", "b_r", "b_g", "b_b"),
        *("cx", "cy", "radius", "period", "phase_x", "phase_y", "tilt", "gradient", "gradient_angle"),
        *NOISE_COLUMNS,
    )

    def sample_styles(self, rng: np.random.Generator, n: int) -> Array:
        first, second = distinct_colours(rng, n, gap=0.6)
        background = rng.random((n, 3))
        return np.column_stack(
            [
                background,
                first,
                second,
                rng.uniform(15.0, 25.0, (n, 2)),
                rng.uniform(11.0, 14.0, n),
                rng.uniform(4.5, 6.5, n),
                rng.uniform(0.0, 1.0, (n, 2)),
                rng.uniform(-0.15, 0.15, n),
                rng.uniform(-0.2, 0.2, n),
                rng.uniform(0.0, 2 * np.pi, n),
            ]
        )

    def draw(self, label: int, style: Array) -> Array:
        background, first, second = style[0:3], style[3:6], style[6:9]
        cx, cy, radius, period, phase_x, phase_y, tilt, gradient, gradient_angle = style[9:18]
        ys, xs = grid(self.height, self.width)
        cos, sin = math.cos(tilt), math.sin(tilt)
        u = (cos * (xs - cx) + sin * (ys - cy)) / period + phase_x
        v = (-sin * (xs - cx) + cos * (ys - cy)) / period + phase_y
        fu, fv = u - np.floor(u), v - np.floor(v)
        if label == 0:
            texture = fv < 0.5
        elif label == 1:
            texture = fu < 0.5
        elif label == 2:
            texture = (fu < 0.5) ^ (fv < 0.5)
        else:
            texture = (fu - 0.5) ** 2 + (fv - 0.5) ** 2 <= 0.3**2
        patch = (xs - cx) ** 2 + (ys - cy) ** 2 <= radius**2
        on = pool((patch & texture).astype(np.float64), self.height, self.width)[..., None]
        off = pool((patch & ~texture).astype(np.float64), self.height, self.width)[..., None]
        ramp = (
            gradient
            * (
                math.cos(gradient_angle) * (np.arange(self.width)[None, :] - self.width / 2)
                + math.sin(gradient_angle) * (np.arange(self.height)[:, None] - self.height / 2)
            )
            / (self.width / 2)
        )
        outside = np.clip(background + ramp[..., None], 0.0, 1.0)
        return outside * (1.0 - on - off) + first * on + second * off


#: every scene by its domain name
SCENES: dict[str, Scene] = {scene.name: scene for scene in (Shapes(), Bars(), Textures())}
