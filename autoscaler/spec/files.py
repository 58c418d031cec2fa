"""Reading files: UTF-8 text, JSON snapshots and YAML spec files, with errors that name the file and the place.

`read_text` reads a file (or standard input for "-") and names the byte offset of invalid UTF-8. `parse_json`
refuses what Python's json module would let through but JSON and Kubernetes do not (NaN, Infinity, lone
UTF-16 surrogates, a key twice in one object) and what would exhaust the reader (deep nesting, numbers of
thousands of digits).
`load_spec_file` reads every document of a YAML spec file (kubectl's `---` separated stream) into validated
autoscalers (autoscaler/spec/objects.py); documents of other kinds are skipped, as a spec file often holds
the workload too. A duplicate key in a mapping is an error, as with kubectl's strict field validation, and so
are a recursive alias and aliases that expand a document past MAX_ALIAS_EXPANSION nodes, as with Kubernetes'
YAML decoding: they are found on the composed nodes, before anything walks the expanded document.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from autoscaler.spec.errors import Problem, SpecError
from autoscaler.spec.objects import KINDS, Autoscaler, describe, is_autoscaler, load_autoscaler

# Python refuses to convert integers longer than this from text (sys.int_info.default_max_str_digits).
MAX_DIGITS = 4300
# JSON nested deeper than this is refused: far deeper than any snapshot (a pod nests about ten levels), and
# well within what Python's json module reads without exhausting its recursion limit.
MAX_JSON_DEPTH = 512


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
    body = text.removeprefix("\ufeff")  # RFC 8259 lets a parser ignore a byte order mark; some editors write one
    problem = ""
    try:
        data = json.loads(body, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        problem = f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
    except _JsonConstantError as err:
        name = str(err)
        at = _at(body, next((m for m in _TOKEN.finditer(body) if m.group() == name), None))
        problem = f"not valid JSON: {name} is not a JSON value (JSON has no NaN or Infinity){at}"
    except _DuplicateKeyError as err:
        key = str(err)
        problem = f"the key {key!r} appears twice in one object, the second time{_at(body, _duplicate(body, key))}"
    except RecursionError:
        problem = f"not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels{_at(body, _too_deep(body))}"
    except ValueError as err:  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        if "digits" not in str(err):
            raise
        long = next((m for m in _TOKEN.finditer(body) if _INTEGER.fullmatch(m.group())), None)
        problem = f"a number has more than {MAX_DIGITS} digits{_at(body, long)}"
    if problem:
        raise SpecError([("", problem)], source=source) from None
    deep = _too_deep(body) if _depth(data) > MAX_JSON_DEPTH else None
    if deep is not None:
        raise SpecError(
            [("", f"not valid JSON: nested deeper than {MAX_JSON_DEPTH} levels{_at(body, deep)}")], source=source
        )
    surrogate = find_surrogate(data)
    if surrogate is not None:
        path, value = surrogate
        problem = f"holds a lone UTF-16 surrogate ({value!r}), which is not a Unicode character"
        raise SpecError([(path, problem)], source=source)
    return data


# Python's json module names no place for what it reads but this module refuses (NaN, a key twice, a number
# of thousands of digits, deep nesting); these find it again in the text, only when there is an error.
# A token: a string, a punctuation mark, or a run of anything else (a number, true, NaN).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')
_INTEGER = re.compile(rf"-?[0-9]{{{MAX_DIGITS + 1},}}")


def _at(text: str, token: re.Match[str] | int | None) -> str:
    """ " at line L column C" for a token or an offset of the text (counted as json's errors count)."""
    if token is None:
        return ""
    offset = token if isinstance(token, int) else token.start()
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return f" at line {line} column {column}"


def _duplicate(text: str, key: str) -> re.Match[str] | None:
    """The second occurrence of `key` among the keys of one object."""
    seen: list[set[str] | None] = []  # per open container: its keys so far (None for an array)
    previous: re.Match[str] | None = None
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in ("{", "["):
            seen.append(set() if mark == "{" else None)
        elif mark in ("}", "]") and seen:
            seen.pop()
        elif mark == ":" and previous is not None and previous.group().startswith('"') and seen:
            keys = seen[-1]
            name = json.loads(previous.group())
            if keys is not None and name == key and name in keys:
                return previous
            if keys is not None:
                keys.add(name)
        previous = token
    return None


def _too_deep(text: str) -> int | None:
    """The offset of the first bracket deeper than MAX_JSON_DEPTH."""
    depth = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        depth += 1 if mark in ("{", "[") else -1 if mark in ("}", "]") else 0
        if depth > MAX_JSON_DEPTH:
            return token.start()
    return None


def _depth(data: Any) -> int:
    """How deep arrays and objects nest in parsed JSON (no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


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


# Kubernetes' YAML decoding (go-yaml, under sigs.k8s.io/yaml) refuses an anchor whose value contains an alias
# to itself and a document whose aliases expand it excessively ("document contains excessive aliasing"). A
# document is checked before it is constructed: each node is counted as often as aliases repeat it, so a
# "billion laughs" (a few hundred bytes that expand to 10**9 nodes) is refused in time linear in its size.
# The bound is on the nodes aliases add, far above any real manifest (which repeats a few labels or a
# container list); a document without aliases is never refused for its size.
MAX_ALIAS_EXPANSION = 1_000_000
_EXPANSION_CAP = 2**62  # far above any limit plus the nodes a file can hold


class AliasError(yaml.YAMLError):
    """A document whose aliases recurse or expand it past MAX_ALIAS_EXPANSION nodes; `label` names it if it can."""

    def __init__(self, problem: str, *, label: str, kind: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.label = label
        self.kind = kind


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _where(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1} column {node.start_mark.column + 1}"


def check_aliases(root: yaml.Node, *, anchors: dict[str, yaml.Node], limit: int = MAX_ALIAS_EXPANSION) -> None:
    """Raise AliasError for an anchor that contains itself, or for aliases that add more than `limit` nodes.

    One pass over the distinct nodes (no recursion, so any depth): each node's size once its aliases are
    expanded is computed once and reused wherever an alias repeats it.
    """
    names = {id(node): name for name, node in anchors.items()}
    expanded: dict[int, int] = {}  # a node's size with its aliases expanded (capped, to keep the numbers small)
    open_nodes: set[int] = set()  # the nodes on the path from the root to the one being visited
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if finished:
            open_nodes.discard(id(node))
            expanded[id(node)] = min(_EXPANSION_CAP, 1 + sum(expanded[id(child)] for child in _children(node)))
            continue
        if id(node) in expanded:
            continue
        if id(node) in open_nodes:
            name = names.get(id(node), "?")
            raise AliasError(
                f"not valid YAML: the anchor &{name} at {_where(node)} contains an alias to itself (*{name}); "
                "Kubernetes refuses a recursive alias",
                **_identity(root),
            )
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    added = expanded[id(root)] - len(expanded)
    if added > limit:
        raise AliasError(
            f"not valid YAML: its aliases expand it by more than {limit:,} nodes; Kubernetes refuses "
            'excessive aliasing (a "billion laughs" document)',
            **_identity(root),
        )


def _scalar(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of a plain key of a mapping node, without constructing anything."""
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _identity(root: yaml.Node) -> dict[str, str]:
    """The kind and label (`describe`) of a document read only from its scalars: aliases are not followed."""
    found: dict[str, Any] = {}
    kind = _scalar(root, "kind")
    if isinstance(kind, yaml.ScalarNode):
        found["kind"] = kind.value
    meta = _scalar(root, "metadata")
    for key in ("name", "namespace"):
        value = _scalar(meta, key)
        if isinstance(value, yaml.ScalarNode):
            found.setdefault("metadata", {})[key] = value.value
    return {"label": describe(found) if "kind" in found else "", "kind": found.get("kind", "")}


_MERGE = "tag:yaml.org,2002:merge"


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and alias bombs, and gives every construction error a place."""

    def compose_document(self) -> yaml.Node | None:
        # Composer.compose_document, with the aliases checked before the anchors are forgotten. (The stubs
        # leave get_event untyped and give the root node an index it does not have.)
        self.get_event()  # type: ignore[no-untyped-call]  # DocumentStart
        node = self.compose_node(None, None)  # type: ignore[arg-type]
        self.get_event()  # type: ignore[no-untyped-call]  # DocumentEnd
        anchors, self.anchors = self.anchors, {}
        if node is not None:
            check_aliases(node, anchors=anchors)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:  # `<<: *defaults`: the mapping's own keys override the merged ones
                continue
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


def yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    return f"not valid YAML: {problem}{where}"


def parse_yaml(text: str, *, source: str) -> Any:
    """The one YAML document of a settings file (None when empty), read with the spec files' loader.

    The same refusals as spec files (a duplicate key, a recursive or excessive alias, invalid YAML); a second
    document is refused too. SpecError names the source and the place.
    """
    try:
        loader = StrictLoader(text)
    except yaml.YAMLError as err:
        raise SpecError([("", yaml_problem(err))], source=source) from None
    try:
        data = loader.get_single_data()
    except AliasError as err:
        raise SpecError([("", err.problem)], source=source) from None
    except yaml.composer.ComposerError as err:  # "expected a single document in the stream"
        raise SpecError([("", f"holds more than one YAML document{_at_mark(err)}")], source=source) from None
    except yaml.YAMLError as err:
        raise SpecError([("", yaml_problem(err))], source=source) from None
    except RecursionError:
        raise SpecError([("", "not valid YAML: nested too deeply to read")], source=source) from None
    finally:
        loader.dispose()
    return data


def _at_mark(err: yaml.MarkedYAMLError) -> str:
    mark = err.problem_mark
    return f" (the second starts at line {mark.line + 1})" if mark is not None else ""


@dataclass(frozen=True, slots=True)
class Document:
    """A reported document of a spec file: its 1-based position, kind, label, and autoscaler or problems."""

    index: int
    label: str
    autoscaler: Autoscaler | None = None
    problems: list[Problem] = field(default_factory=list)
    kind: str = ""  # "" when the document is not a Kubernetes object, or could not be read

    @property
    def is_autoscaler(self) -> bool:
        """Whether the document is a PrometheusAutoscaler or HorizontalPodAutoscaler (valid or not)."""
        return self.kind in KINDS


@dataclass(frozen=True, slots=True)
class SpecFile:
    """The autoscalers and other documents with problems of one spec file; `problems` are the file's own."""

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
    try:
        loader = StrictLoader(text)
    except yaml.YAMLError as err:  # the reader checks every character first
        return SpecFile(source, [], 0, [("", yaml_problem(err))])
    try:
        while True:
            try:
                if not loader.check_data():  # type: ignore[no-untyped-call]  # untyped in the stubs
                    break
                index += 1
                obj = loader.get_data()
            except AliasError as err:  # the document was read to its end: the next one can still be read
                documents.append(Document(index, err.label, problems=[("", err.problem)], kind=err.kind))
                continue
            except yaml.YAMLError as err:
                problems.append(("", yaml_problem(err)))
                break
            except RecursionError:
                problems.append(("", "not valid YAML: nested too deeply to read"))
                break
            document = _document(obj, index=index, scale_to_zero=scale_to_zero, stored=stored)
            if document is not None:
                documents.append(document)
            elif obj is not None:  # an object of another kind (an empty document, as between two `---`, is none)
                skipped += 1
    finally:
        loader.dispose()
    if not problems and not any(d.is_autoscaler for d in documents):
        problems.append(("", "holds no PrometheusAutoscaler or HorizontalPodAutoscaler"))
    return SpecFile(source, documents, skipped, problems)


def _document(obj: Any, *, index: int, scale_to_zero: bool, stored: bool) -> Document | None:
    """The document to report for a parsed object; None for an empty document or an object of another kind."""
    if obj is None:
        return None
    if not is_autoscaler(obj):
        if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
            return None
        return Document(index, "", problems=[("", "not a Kubernetes object (no kind)")])
    label, kind = describe(obj), obj["kind"]
    surrogate = find_surrogate(obj)
    if surrogate is not None:
        return Document(index, label, problems=[(surrogate[0], "holds a lone surrogate")], kind=kind)
    try:
        autoscaler = load_autoscaler(obj, scale_to_zero=scale_to_zero, stored=stored)
    except SpecError as err:
        return Document(index, label, problems=err.problems, kind=kind)
    return Document(index, label, autoscaler=autoscaler, kind=kind)
