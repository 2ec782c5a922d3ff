"""Memory and time of a user's domain with a large memory-mapped reference split.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_user_domain.py [--images 50000] [--size 64] [--channels 3]
                                                                [--small 500] [--classes 10] [--threads 1]

Writes a reference split of ``--images`` random uint8 images (``--channels``×``--size``×``--size``)
as a ``.npy`` beside its ``.labels.npy`` in a temporary folder, chunk by chunk with plain file
writes (the script never holds it whole, nor maps it while writing), opens it with
:meth:`cfcheck.domains.data.ArraySource.from_file` (memory-mapped), builds an
:class:`~cfcheck.domains.data.ImageDomain` with one source per role (small in-memory train,
selection and scored sources of ``--small`` images; the big reference) and hands a small
embedding network over through :class:`~cfcheck.models.store.ModuleStore`. Then prints, one
figure per line:

- the seconds and the peak resident memory (``resource.getrusage(...).ru_maxrss``) of embedding the
  whole reference split the way cfcheck does (``ModelZoo.split_logits``: batch by batch through
  ``ImageSplit.batches``, memoised on disk in ``CFCHECK_CACHE_DIR``, which starts empty), with the
  peak split into anonymous and file-backed pages (``/proc/self/status``, sampled: pages of a
  memory-mapped file that were read count in the resident size but are page cache the kernel can
  drop);
- the size the reference split would take materialised as float32;
- the per-domain start-up cost: constructing and resolving the domain, and ``ModelZoo.realism_pool``
  (features + standardisation) of a freshly constructed domain with the on-disk memo filled and empty.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import resource  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

MIB = 2**20


class Embedding(nn.Module):
    """A small convolutional embedding: N×C×H×W in [0, 1] → N×32 features."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(channels, 16, 3, stride=2, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())

    def feature_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        first = self.block1(x)
        return [first, self.block2(first)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.feature_maps(x)[-1].mean(dim=(2, 3))


def write_npy(path: Path, count: int, shape: tuple[int, ...], classes: int, chunk: int, seed: int) -> None:
    """``count`` random uint8 images in ``path`` and their labels in ``<stem>.labels.npy``, written
    ``chunk`` images at a time with ordinary writes (no memory map, nothing held whole)."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle,
            {
                "descr": np.lib.format.dtype_to_descr(np.dtype(np.uint8)),
                "fortran_order": False,
                "shape": (count, *shape),
            },
        )
        for start in range(0, count, chunk):
            handle.write(rng.integers(0, 256, (min(chunk, count - start), *shape), dtype=np.uint8).tobytes())
    np.save(path.with_name(f"{path.stem}.labels.npy"), rng.integers(0, classes, count, dtype=np.int64))


def small_source(count: int, shape: tuple[int, ...], classes: int, seed: int, name: str):
    from cfcheck.domains.data import ArraySource

    rng = np.random.default_rng(seed)
    labels = np.arange(count) % classes  # every class present
    return ArraySource(rng.integers(0, 256, (count, *shape), dtype=np.uint8), labels, name=name)


def make_domain(reference_path: Path, args: argparse.Namespace, shape: tuple[int, ...], root: Path, store):
    from cfcheck.domains.data import ArraySource, ImageDomain

    sources = {
        role: small_source(args.small, shape, args.classes, seed, role)
        for seed, role in enumerate(("train", "selection", "scored"), start=1)
    }
    sources["reference"] = ArraySource.from_file(reference_path)
    return ImageDomain(
        "bench_user_domain",
        sources,
        root=root,
        model_roles={"embedding": ("embedding",)},
        class_names=[str(c) for c in range(args.classes)],
        model_store=store,
    )


class MemorySampler:
    """Peaks of VmRSS, RssAnon and RssFile (/proc/self/status), sampled every ``interval`` seconds."""

    FIELDS = ("VmRSS", "RssAnon", "RssFile")

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = dict.fromkeys(self.FIELDS, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @classmethod
    def now(cls) -> dict[str, int]:
        """The fields in KiB now."""
        found = {}
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in cls.FIELDS:
                    found[key] = int(value.split()[0])
        return found

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, value in self.now().items():
                self.peak[key] = max(self.peak[key], value)
            self._stop.wait(self.interval)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for key, value in self.now().items():
            self.peak[key] = max(self.peak[key], value)


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def report(name: str, value: float, unit: str) -> None:
    print(f"{name}: {value:.2f} {unit}", flush=True)


def measure(name: str, compute):
    """``compute()``, reporting its seconds, the process's ru_maxrss after it and the sampled peaks of
    its resident memory: total, anonymous and file-backed (pages of memory-mapped files)."""
    before = MemorySampler.now()
    with MemorySampler() as sampler:
        started = time.perf_counter()
        result = compute()
        seconds = time.perf_counter() - started
    report(f"{name}_seconds", seconds, "s")
    report(f"{name}_maxrss_after", maxrss_mib(), "MiB")
    report(f"{name}_peak_rss_sampled", sampler.peak["VmRSS"] / 1024, "MiB")
    for field, kind in (("RssAnon", "anon"), ("RssFile", "file")):
        report(f"{name}_peak_rss_{kind}_sampled", sampler.peak[field] / 1024, "MiB")
        report(f"{name}_rss_{kind}_growth", (sampler.peak[field] - before[field]) / 1024, "MiB")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=50000, help="images in the reference split")
    parser.add_argument("--size", type=int, default=64, help="image height and width")
    parser.add_argument("--channels", type=int, default=3)
    parser.add_argument("--small", type=int, default=500, help="images of each small role (train, selection, scored)")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=2048, help="images per write of the reference file")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    shape = (args.channels, args.size, args.size)

    with tempfile.TemporaryDirectory(prefix="cfcheck-bench-user-domain-") as folder:
        folder = Path(folder)
        os.environ["CFCHECK_CACHE_DIR"] = str(folder / "cache")  # the on-disk memo starts empty
        from cfcheck.domains.registry import resolve_domain
        from cfcheck.models.store import ModuleStore
        from cfcheck.models.zoo import ModelZoo

        print(
            f"reference split: {args.images} uint8 images of {shape}; small roles: {args.small} images each; "
            f"torch threads: {torch.get_num_threads()}",
            flush=True,
        )
        reference_path = folder / "reference.npy"
        started = time.perf_counter()
        write_npy(reference_path, args.images, shape, args.classes, args.chunk, seed=0)
        report("write_reference_npy_seconds", time.perf_counter() - started, "s")
        report("reference_npy_file_size", reference_path.stat().st_size / MIB, "MiB")

        torch.manual_seed(0)
        store = ModuleStore({"embedding": Embedding(args.channels)})
        started = time.perf_counter()
        domain = make_domain(reference_path, args, shape, folder / "domain", store)
        constructed = time.perf_counter()
        resolved = resolve_domain(domain)
        report("domain_construct_seconds", constructed - started, "s")
        report("domain_resolve_seconds", time.perf_counter() - constructed, "s")
        assert resolved is domain and len(domain.split("reference")) == args.images

        # (a) the whole reference split's embedding features, as cfcheck computes them
        report("maxrss_before_reference_features", maxrss_mib(), "MiB")
        zoo = ModelZoo(domain, "cpu")
        features = measure(
            "reference_features", lambda: zoo.split_logits(zoo.embedding_name, domain.split_roles["reference"])
        )
        assert features.shape == (args.images, 32), features.shape

        # (b) the same split materialised as float32
        materialised = args.images * int(np.prod(shape)) * 4 / MIB
        report("reference_materialised_float32", materialised, "MiB")
        report("peak_maxrss_over_materialised", maxrss_mib() / materialised, "x")

        # (c) per-domain start-up in a later session: a fresh domain object, the memo on disk filled...
        started = time.perf_counter()
        again = make_domain(reference_path, args, shape, folder / "domain", store)
        resolve_domain(again)
        report("domain_construct_and_resolve_seconds", time.perf_counter() - started, "s")
        measure("reference_digest", lambda: again.split("reference").digest)
        pool, classes = measure("realism_pool_memo_filled", lambda: ModelZoo(again, "cpu").realism_pool)
        assert pool.shape == (args.images, 32) and len(classes) == args.images
        # ... and empty (a first session on this machine)
        os.environ["CFCHECK_CACHE_DIR"] = str(folder / "cache-empty")
        fresh = make_domain(reference_path, args, shape, folder / "domain", store)
        fresh_pool, _ = measure("realism_pool_memo_empty", lambda: ModelZoo(fresh, "cpu").realism_pool)
        assert torch.allclose(fresh_pool, pool)
        materialised_anywhere = any("images" in d.split("reference").__dict__ for d in (domain, again, fresh))
        print(f"reference_split_images_materialised: {materialised_anywhere}", flush=True)
        report("final_maxrss", maxrss_mib(), "MiB")


if __name__ == "__main__":
    main()
