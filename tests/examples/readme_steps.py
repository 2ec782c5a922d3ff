"""Following a worked example's README verbatim: its 'Run it' block's commands, run one by one in a copy
of the example inside a throw-away repository layout (``cd`` lines move the working folder)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """One command on one thread; its output kept, its exit status not checked."""
    return subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)


def readme_commands(example: Path) -> list[str]:
    """The non-blank lines of the bash block under the example README's 'Run it' heading."""
    text = (example / "README.md").read_text()
    block = re.search(r"## Run it.*?```bash\n(.*?)```", text, re.S)
    assert block, "the README's 'Run it' section has a bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def follow_readme(example: Path, tmp_path: Path) -> tuple[Path, dict[str, subprocess.CompletedProcess[str]]]:
    """Copy ``example`` (without its reports and its bars, which the commands earn again) to
    ``tmp_path/repository/examples/<name>`` and run every README command from ``tmp_path/repository``;
    each command but a pytest run must exit 0, and the commands must end in the copy's folder.

    Returns:
        The copy's folder, and each command line's completed process.
    """
    folder = tmp_path / "repository" / "examples" / example.name
    folder.parent.mkdir(parents=True)
    shutil.copytree(example, folder, ignore=shutil.ignore_patterns("reports", "__pycache__"))
    (folder / "bars-quick.json").unlink()
    cwd = tmp_path / "repository"
    outputs = {}
    for line in readme_commands(example):
        words = shlex.split(line)
        if words[0] == "cd":
            cwd = cwd / words[1]
            continue
        program = {"python": [sys.executable], "cfcheck": [sys.executable, "-m", "cfcheck.cli"]}[words[0]]
        done = run([*program, *words[1:]], cwd)
        outputs[line] = done
        if "pytest" not in words:
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert cwd == folder
    return folder, outputs
