"""The core imports only the standard library and itself (the rule of ARCHITECTURE.md).

import-linter checks the project's own layers in `make test`; this test also catches any third-party
import, whatever its name, by reading every import statement of autoscaler/core.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "autoscaler" / "core"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_core_imports_only_the_standard_library() -> None:
    files = sorted(CORE.glob("*.py"))
    assert files, "autoscaler/core has no modules"
    offenders = {
        f"{path.name}: {name}"
        for path in files
        for name in _imports(path)
        if not name.startswith("autoscaler.core")
        and name.split(".")[0] not in sys.stdlib_module_names
        and name != "__future__"
    }
    assert offenders == set()


def test_core_never_reads_the_clock() -> None:
    """Time is a parameter: no datetime.now(), time.time() or monotonic() in the core."""
    for path in CORE.glob("*.py"):
        text = path.read_text()
        for call in ("datetime.now(", ".utcnow(", "time.time(", "monotonic(", "date.today("):
            assert call not in text, f"{path.name} calls {call}"
