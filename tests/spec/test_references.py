"""The spec layer's docstrings and comments name only files that exist.

As tests/core/test_docs_paths.py checks the docs: a comment that sends a reader to a renamed test fails here.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from tests.core.test_docs_paths import PACKAGE_PATH, REPO, REPO_PATH

MODULES = sorted(
    [*REPO.glob("autoscaler/spec/*.py"), REPO / "autoscaler" / "cli.py", REPO / "autoscaler" / "replay.py"]
)


def prose(source: str) -> str:
    """Every docstring and comment of a module, one after the other."""
    tree = ast.parse(source)
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))]
    docstrings = [doc for node in nodes if (doc := ast.get_docstring(node))]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    comments = [token.string for token in tokens if token.type == tokenize.COMMENT]
    return "\n".join(docstrings + comments)


def missing_paths(text: str) -> list[str]:
    paths = REPO_PATH.findall(text) + [f"autoscaler/{p}" for p in PACKAGE_PATH.findall(text)]
    return [p for p in paths if not any(REPO.glob(p.rstrip(".")))]


@pytest.mark.parametrize("module", MODULES, ids=[str(m.relative_to(REPO)) for m in MODULES])
def test_docstrings_and_comments_name_existing_files(module: Path) -> None:
    assert missing_paths(prose(module.read_text())) == []


def test_the_check_finds_a_missing_file() -> None:
    source = '"""Held in step by tests/spec/test_crd_in_step.py and core/labels.py."""\n# see tests/spec/specs.py\n'
    assert missing_paths(prose(source)) == ["tests/spec/test_crd_in_step.py"]
