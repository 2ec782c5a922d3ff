"""``cfcheck new-adapter``: write an adapter for a method kind into a file of the user's."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``new-adapter`` through ``command`` (name, help → its parser); its name → what runs it."""
    from cfcheck.kinds.protocols import MethodKind  # torch-free

    new_adapter = command("new-adapter", help="write a ten-line adapter for a method kind into a file of yours")
    new_adapter.add_argument("kind", choices=[kind.value for kind in MethodKind], help="the method kind")
    new_adapter.add_argument(
        "path",
        type=Path,
        nargs="?",
        default=None,
        help="the file to write (default: my_<kind>.py here); never overwritten",
    )
    return {"new-adapter": _new_adapter}


def _new_adapter(args: argparse.Namespace) -> int:
    from cfcheck.kinds import adapter_template

    path = args.path if args.path is not None else Path(f"my_{args.kind}.py")
    if path.suffix != ".py":
        raise ValueError(f"{path}: an adapter is a Python module; name it something.py")
    if path.exists():
        raise ValueError(f"{path} exists; cfcheck new-adapter never overwrites a file (choose another path)")
    path.write_text(adapter_template(args.kind).format(name=path.stem), encoding="utf-8")
    print(
        f"wrote {path}: replace the placeholder with your method, then run\n  pytest --method={path} --cfcheck-profile quick"
    )
    return 0
