"""The spec layer's errors: what was wrong, and where.

A problem is a pair (field path, message): "spec.metrics[0].resource.target.averageUtilization", "must be
greater than 0". Paths are written as in Kubernetes' own errors (dots for fields, [i] for list items).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

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


_SEGMENT = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, directly, in a list or as an optional value; None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (list, typing.Union, types.UnionType, typing.Annotated):
        for arg in typing.get_args(annotation):
            model = _model_in(arg)
            if model is not None:
                return model
    return None


def _field_order(path: str, model: type[BaseModel] | None) -> list[tuple[int, str]]:
    """A sort key for a path: each field by its place in its model (unknown ones last), each item by index."""
    key: list[tuple[int, str]] = []
    for match in _SEGMENT.finditer(path):
        index, name = match.groups()
        if index is not None:
            key.append((int(index), ""))
            continue
        fields = list(model.model_fields.items()) if model is not None else []
        place = next((i for i, (n, f) in enumerate(fields) if name in (n, f.alias)), len(fields))
        key.append((place, name))
        model = _model_in(fields[place][1].annotation) if place < len(fields) else None
    return key


def in_field_order(problems: list[Problem], *, model: type[BaseModel], prefix: str = "") -> list[Problem]:
    """The problems once each, in the order of the fields of `model` (which `prefix` names) and of list items.

    Problems of one field keep their order, so a field's own problem comes before the rules that span fields.
    """
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda problem: _field_order(problem[0].removeprefix(prefix), model))
