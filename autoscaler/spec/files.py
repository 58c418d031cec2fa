"""Reading files: UTF-8 text, JSON snapshots and YAML spec files, with errors that name the file and the place.

`read_text` reads a file (or standard input for "-") and names the byte offset of invalid UTF-8. `parse_json`
refuses what Python's json module would let through but JSON and Kubernetes do not (NaN, Infinity, lone
UTF-16 surrogates, a key twice in one object) and what would exhaust the reader (deep nesting, numbers of
thousands of digits).
`load_spec_file` reads every document of a YAML spec file (kubectl's `---` separated stream) into validated
autoscalers (autoscaler/spec/objects.py); documents of other kinds are skipped, as a spec file often holds
the workload too. A duplicate key in a mapping is an error, as with kubectl's strict field validation.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from autoscaler.spec.errors import Problem, SpecError
from autoscaler.spec.objects import Autoscaler, describe, is_autoscaler, load_autoscaler

# Python refuses to convert integers longer than this from text (sys.int_info.default_max_str_digits).
MAX_DIGITS = 4300


def read_text(path: str) -> str:
    """The file's text ("-" reads standard input); SpecError names the file and any invalid UTF-8 byte."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as err:
        raise SpecError([("", f"cannot read: {err.strerror or err}")], source=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        problem = f"not valid UTF-8: byte 0x{data[err.start]:02x} at byte offset {err.start} ({err.reason})"
        raise SpecError([("", problem)], source=path) from None


def _no_constant(name: str) -> Any:
    raise _JsonConstantError(name)


class _JsonConstantError(ValueError):
    """Python's json module reads NaN and Infinity; JSON has no such values."""


class _DuplicateKeyError(ValueError):
    """Python's json module keeps the last of two equal keys; Kubernetes' strict decoding refuses them."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def parse_json(text: str, *, source: str) -> Any:
    """A JSON document, refusing NaN/Infinity, lone surrogates, very deep nesting and very long numbers."""
    try:
        # RFC 8259 lets a parser ignore a byte order mark; editors on some systems write one.
        data = json.loads(text.removeprefix("\ufeff"), parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        problem = f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        raise SpecError([("", problem)], source=source) from None
    except _JsonConstantError as err:
        problem = f"not valid JSON: {err} is not a JSON value (JSON has no NaN or Infinity)"
        raise SpecError([("", problem)], source=source) from None
    except _DuplicateKeyError as err:
        problem = f"not valid here: the key {str(err)!r} appears twice in one object"
        raise SpecError([("", problem)], source=source) from None
    except RecursionError:
        raise SpecError([("", "not valid here: the JSON is nested too deeply")], source=source) from None
    except ValueError as err:  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        if "digits" not in str(err):
            raise
        problem = f"not valid here: a number has more than {MAX_DIGITS} digits"
        raise SpecError([("", problem)], source=source) from None
    surrogate = find_surrogate(data)
    if surrogate is not None:
        path, value = surrogate
        problem = f"holds a lone UTF-16 surrogate ({value!r}), which is not a Unicode character"
        raise SpecError([(path, problem)], source=source)
    return data


def find_surrogate(data: Any) -> tuple[str, str] | None:
    """The path and text of the first key or string holding a lone UTF-16 surrogate, or None (no recursion)."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if _has_surrogate(node):
                return path, node
        elif isinstance(node, dict):
            for key, value in node.items():
                child = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and _has_surrogate(key):
                    return child, key
                stack.append((child, value))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", value) for i, value in enumerate(node))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# --- YAML spec files -----------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and gives every construction error a place in the file."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: SafeLoader's own error follows
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except ValueError as err:  # int() of a huge number, an impossible date
            reason = f"a number has more than {MAX_DIGITS} digits" if "digits" in str(err) else str(err)
            raise yaml.constructor.ConstructorError(None, None, reason, node.start_mark) from None


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    return f"not valid YAML: {problem}{where}"


@dataclass(frozen=True, slots=True)
class Document:
    """One document of a spec file: its 1-based position, what it is, and the autoscaler or its problems."""

    index: int
    label: str
    autoscaler: Autoscaler | None = None
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SpecFile:
    """Every document of one spec file; `problems` are the file's own (unreadable, not YAML)."""

    source: str
    documents: list[Document]
    skipped: int
    problems: list[Problem] = field(default_factory=list)

    @property
    def autoscalers(self) -> list[Autoscaler]:
        return [d.autoscaler for d in self.documents if d.autoscaler is not None]

    @property
    def valid(self) -> bool:
        return not self.problems and all(not d.problems for d in self.documents)


def load_spec_file(path: str, *, scale_to_zero: bool, stored: bool = True) -> SpecFile:
    """Read, parse and validate every autoscaler of a spec file ("-": standard input); never raises for bad input."""
    try:
        text = read_text(path)
    except SpecError as err:
        return SpecFile(path, [], 0, err.problems)
    return load_spec_text(text, source=path, scale_to_zero=scale_to_zero, stored=stored)


def load_spec_text(text: str, *, source: str, scale_to_zero: bool, stored: bool = True) -> SpecFile:
    """`load_spec_file` on text already read."""
    documents: list[Document] = []
    problems: list[Problem] = []
    skipped = 0
    index = 0
    stream = yaml.load_all(text, Loader=_Loader)
    while True:
        try:
            obj = next(stream)
        except StopIteration:
            break
        except yaml.YAMLError as err:
            problems.append(("", _yaml_problem(err)))
            break
        except RecursionError:
            problems.append(("", "not valid here: the YAML is nested too deeply"))
            break
        index += 1
        if obj is None:  # an empty document, as between two `---`
            continue
        if not is_autoscaler(obj):
            if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
                skipped += 1
            else:
                documents.append(Document(index, "", problems=[("", "not a Kubernetes object (no kind)")]))
            continue
        surrogate = find_surrogate(obj)
        if surrogate is not None:
            documents.append(Document(index, describe(obj), problems=[(surrogate[0], "holds a lone surrogate")]))
            continue
        try:
            autoscaler = load_autoscaler(obj, scale_to_zero=scale_to_zero, stored=stored)
        except SpecError as err:
            documents.append(Document(index, describe(obj), problems=err.problems))
        else:
            documents.append(Document(index, describe(obj), autoscaler=autoscaler))
    if not problems and not documents:
        problems.append(("", "holds no PrometheusAutoscaler or HorizontalPodAutoscaler"))
    return SpecFile(source, documents, skipped, problems)
