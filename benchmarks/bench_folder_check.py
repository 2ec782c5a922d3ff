"""What the load check of a class-per-folder domain costs: every file decoded once per machine.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_folder_check.py [--images 2000] [--size 32] [--classes 3]

Writes ``--images`` random RGB PNGs (``--size``×``--size``) into ``--classes`` class folders of a
temporary tree, then prints, one figure per line: the seconds :meth:`cfcheck.domains.folders.
FolderSource.problems` takes the first time (every file decoded, the sizes kept in the derived-data
cache, which starts empty) and again from a fresh source object (the tree's digest recomputed from
its file names, sizes and times, the sizes read from the cache).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--classes", type=int, default=3)
    args = parser.parse_args()
    import numpy as np
    from PIL import Image

    with tempfile.TemporaryDirectory() as folder:
        os.environ["CFCHECK_CACHE_DIR"] = str(Path(folder) / "cache")
        from cfcheck.domains.folders import FolderSource

        root = Path(folder) / "tree"
        generator = np.random.default_rng(0)
        for i in range(args.images):
            target = root / f"class{i % args.classes}"
            target.mkdir(parents=True, exist_ok=True)
            pixels = (generator.random((args.size, args.size, 3)) * 255).astype("uint8")
            Image.fromarray(pixels, "RGB").save(target / f"{i:06d}.png")
        for label in ("first check (decodes every file)", "again, a fresh source (cached)"):
            started = time.perf_counter()
            problems = FolderSource(root).problems()
            print(f"{label}: {time.perf_counter() - started:.3f} s for {args.images} images, {len(problems)} problems")


if __name__ == "__main__":
    main()
