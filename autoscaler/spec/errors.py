"""The spec layer's errors: what was wrong, and where.

A problem is a pair (field path, message): "spec.metrics[0].resource.target.averageUtilization", "must be
greater than 0". Paths are written as in Kubernetes' own errors (dots for fields, [i] for list items).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

Problem = tuple[str, str]


class SpecError(Exception):
    """A spec, setting or snapshot that cannot be used; `path` names the field, `problems` lists them all."""

    def __init__(self, problems: list[Problem], *, source: str = "") -> None:
        self.problems = problems
        self.source = source
        self.path = problems[0][0] if problems else ""
        lines = [f"{path}: {message}" if path else message for path, message in problems]
        prefix = f"{source}: " if source else ""
        if len(lines) == 1:
            super().__init__(prefix + lines[0])
        else:
            super().__init__(prefix + f"{len(lines)} problems:\n  " + "\n  ".join(lines))


def join(prefix: str, path: str) -> str:
    """`prefix` and a path inside it: join("spec", "maxReplicas"), join("pods", "[0].name")."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def error_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a field path, without pydantic's union and function tags."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not part.startswith(("function-", "union[", "list[", "dict[")) and "[" not in part:
            path += f".{part}" if path else part
    return path


# Errors whose message is clearer with the value that was given.
_SHOW_INPUT = frozenset(
    {
        "int_type", "float_type", "string_type", "bool_type",
        "greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number", "literal_error",
    }
)  # fmt: skip


def _message(item: Any) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        return "unknown field (check its spelling and nesting)"
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be an object, not {describe_value(item.get('input'))}"
    if kind == "list_type":
        return f"must be an array, not {describe_value(item.get('input'))}"
    message = str(item["msg"]).removeprefix("Value error, ")
    if kind in _SHOW_INPUT:
        message += f", not {describe_value(item.get('input'))}"
    return message


def describe_value(value: Any) -> str:
    """A short, safe description of a wrong value: its JSON type, and the value itself when short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value.bit_length() < 64 else "an integer beyond 64 bits"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def pydantic_problems(err: ValidationError, prefix: str = "") -> list[Problem]:
    """Every error pydantic found, as problems whose paths start at `prefix`."""
    return [(join(prefix, error_path(tuple(item["loc"]))), _message(item)) for item in err.errors()]
