"""Options and shared helpers of the pytest-benchmark suites in ``benchmarks/test_*.py``.

    OMP_NUM_THREADS=1 pytest benchmarks --benchmark-only [--bench-threads 2] [--bench-n N]

``--bench-threads`` (or ``CFCHECK_BENCH_THREADS``) sets torch's threads, one by default.
``--bench-n`` (or ``CFCHECK_BENCH_N``) replaces every suite's default size (images, inputs,
counterfactuals) by N: small N checks that the suites run (``--benchmark-disable`` runs each
benchmark once), it measures nothing comparable. Each benchmark records the figure it exists
for (images per second, a ratio, ...) in ``benchmark.extra_info`` (saved with
``--benchmark-json`` / ``--benchmark-autosave``) and the figures are printed after the run.
``pytest tests`` does not collect this folder (the project's testpaths are ``tests``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
import torch

#: seconds of every benchmark that ran, by its figures' key, for ratios between benchmarks
_SECONDS: dict[str, float] = {}
#: (test id, figure, value, unit) in the order they were recorded, printed after the run
_FIGURES: list[tuple[str, str, float, str]] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cfcheck benchmarks")
    group.addoption(
        "--bench-threads",
        type=int,
        default=int(os.environ.get("CFCHECK_BENCH_THREADS", "1")),
        help="torch threads for the benchmarks (default 1, or CFCHECK_BENCH_THREADS)",
    )
    bench_n = os.environ.get("CFCHECK_BENCH_N")
    group.addoption(
        "--bench-n",
        type=int,
        default=int(bench_n) if bench_n else None,
        help="use N images / inputs / counterfactuals instead of each benchmark's default size "
        "(or CFCHECK_BENCH_N); small N only checks that the benchmarks run",
    )
    group.addoption(
        "--bench-superlu",
        action="store_true",
        help="ROAD: also time one block-diagonal SuperLU solve of the batch per column ordering",
    )


def pytest_configure(config: pytest.Config) -> None:
    threads = config.getoption("--bench-threads", default=None)
    if threads:
        torch.set_num_threads(threads)


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"cfcheck benchmarks: torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
        f"sizes {'default' if config.getoption('--bench-n') is None else config.getoption('--bench-n')}, "
        f"load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )


@pytest.fixture(scope="session")
def size(request: pytest.FixtureRequest) -> Callable[[int], int]:
    """``size(default)``: the suite's default size, or ``--bench-n`` when given."""
    override = request.config.getoption("--bench-n")
    return lambda default: default if override is None else override


class Figures:
    """What one benchmark reports besides pytest-benchmark's seconds (into ``extra_info``)."""

    def __init__(self, benchmark: Any, test_id: str) -> None:
        self.benchmark = benchmark
        self.test_id = test_id

    def seconds(self, statistic: str = "min") -> float | None:
        """The benchmark's ``min`` or ``median`` seconds per round; None when it was not timed."""
        stats = getattr(self.benchmark, "stats", None)
        return None if stats is None else float(getattr(stats.stats, statistic))

    def record(self, name: str, value: float, unit: str = "") -> None:
        self.benchmark.extra_info[name] = value
        _FIGURES.append((self.test_id, name, value, unit))

    def rate(self, name: str, items: int, unit: str = "img/s", statistic: str = "min", key: str | None = None) -> None:
        """``items`` per second of the benchmark's ``statistic``; ``key`` keeps the seconds for :meth:`ratio`."""
        seconds = self.seconds(statistic)
        if seconds is None:
            return
        self.benchmark.extra_info["statistic"] = statistic
        self.record(name, items / seconds, unit)
        if key:
            _SECONDS[key] = seconds

    def keep(self, key: str, statistic: str = "min") -> float | None:
        """Keep the benchmark's seconds under ``key`` for a later benchmark's :meth:`ratio`."""
        seconds = self.seconds(statistic)
        if seconds is not None:
            _SECONDS[key] = seconds
        return seconds

    def ratio(self, name: str, numerator: str, denominator: str) -> None:
        """Record seconds(numerator) / seconds(denominator) when both benchmarks ran in this session."""
        if numerator in _SECONDS and denominator in _SECONDS:
            self.record(name, _SECONDS[numerator] / _SECONDS[denominator], "x")


@pytest.fixture
def figures(benchmark: Any, request: pytest.FixtureRequest) -> Figures:
    return Figures(benchmark, request.node.nodeid.split("::", 1)[-1])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _FIGURES:
        return
    terminalreporter.write_sep("-", "cfcheck benchmark figures")
    for test_id, name, value, unit in _FIGURES:
        shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
        terminalreporter.write_line(f"{test_id:<56} {name:<44} {shown:>12} {unit}")
    terminalreporter.write_line("load average (1, 5, 15 min): " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
