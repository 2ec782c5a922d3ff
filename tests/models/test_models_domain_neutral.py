"""cfcheck/models is domain-neutral: no code there names a bundled domain.

Docstrings and comments may use a domain as an example; names, imports and other string
constants may not (a domain's models are found through its ``model_recipes()`` hook).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cfcheck.models
from cfcheck.domains import available_domains

MODELS = Path(cfcheck.models.__file__).parent
SOURCES = sorted(MODELS.rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _code_words(source: str) -> list[tuple[int, str]]:
    """(line, text) of every identifier, import and non-docstring string constant."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
    return found


def test_the_scan_sees_code_but_not_prose():
    source = '"""A morpho docstring."""\nimport cfcheck.domains.morpho\nx = "morpho"  # morpho\n'
    assert [line for line, text in _code_words(source) if "morpho" in text] == [2, 3]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(MODELS)))
def test_no_code_in_the_models_folder_names_a_domain(path):
    offending = [
        f"{path.name}:{line}: {text!r}"
        for line, text in _code_words(path.read_text(encoding="utf-8"))
        for domain in available_domains()
        if domain in text.lower()
    ]
    assert not offending, "cfcheck/models names a domain in code:\n" + "\n".join(offending)
