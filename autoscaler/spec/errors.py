"""The spec layer's errors: what was wrong, and where."""

from __future__ import annotations


class SpecError(Exception):
    """A spec, setting or snapshot that cannot be used; `path` names the field, `problems` lists them all."""

    def __init__(self, problems: list[tuple[str, str]], *, source: str = "") -> None:
        self.problems = problems
        self.source = source
        self.path = problems[0][0] if problems else ""
        lines = [f"{path}: {message}" if path else message for path, message in problems]
        prefix = f"{source}: " if source else ""
        if len(lines) == 1:
            super().__init__(prefix + lines[0])
        else:
            super().__init__(prefix + f"{len(lines)} problems:\n  " + "\n  ".join(lines))
