"""Label and field selectors: the grammar of `?labelSelector=` and `?fieldSelector=`, parsed and matched.

Label selectors follow k8s.io/apimachinery/pkg/labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
`k` (exists), `!k` (does not exist), `k>1`, `k<1`, joined by commas; keys and values are validated as the real
server does, and anything else raises `SelectorError` (the server answers 400 BadRequest). Field selectors are
`k=v`, `k==v` and `k!=v` over the field labels each resource supports. Nothing here knows about HTTP. The string
form of a LabelSelector object (/scale's `status.selector`, the SELECTOR columns) is the core's
`autoscaler.core.labels.format_label_selector`, shared with the Kubernetes layer so the two cannot drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from autoscaler.core.labels import SelectorSyntaxError, selector_from_object

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SPECIAL = ("!=", "==", "!", "=", "(", ")", ",", ">", "<")


class SelectorError(ValueError):
    """A selector the real server would reject with 400 BadRequest; the message is the server's reason."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator in ("=", "in"):
            return present and value in self.values
        if self.operator in ("!=", "notin"):
            return not present or value not in self.values
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if not present:
            return False
        try:
            number = int(value)
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.operator == "gt" else number < bound


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed label selector: all requirements must hold. The empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return all(r.matches(labels or {}) for r in self.requirements)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        special = next((s for s in _SPECIAL if text.startswith(s, i)), None)
        if special is not None:
            out.append(special)
            i += len(special)
            continue
        j = i
        while j < len(text) and not text[j].isspace() and not any(text.startswith(s, j) for s in _SPECIAL):
            j += 1
        out.append(text[i:j])
        i = j
    return out


def validate_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise SelectorError(
            f'unable to parse requirement: key: Invalid value: "{key}": prefix part must be a valid DNS subdomain'
        )
    if not name or len(name) > 63 or not _NAME.match(name):
        raise SelectorError(
            f'unable to parse requirement: key: Invalid value: "{key}": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character and be at most 63 characters"
        )


def validate_value(value: str) -> None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise SelectorError(
            f'unable to parse requirement: values[0][value]: Invalid value: "{value}": a valid label must be '
            "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character and be at most 63 characters"
        )


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += 1
        return token

    def identifier(self, what: str) -> str:
        token = self.take()
        if token is None or token in _SPECIAL:
            found = "end of string" if token is None else f"'{token}'"
            raise SelectorError(f"found {found}, expected: {what}")
        return token

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            key = self.identifier("identifier after '!'")
            validate_key(key)
            if self.peek() not in (None, ","):
                raise SelectorError(f"found '{self.peek()}', expected: ',' or 'end of string'")
            return Requirement(key, "!")
        key = self.identifier("identifier")
        validate_key(key)
        op = self.peek()
        if op in (None, ","):
            return Requirement(key, "exists")
        self.take()
        if op in ("=", "==", "!="):
            value = "" if self.peek() in (None, ",") else self.identifier("identifier")
            validate_value(value)
            return Requirement(key, "!=" if op == "!=" else "=", (value,))
        if op in (">", "<"):
            value = self.identifier("integer")
            # strconv.ParseInt reads it and it must still be a label value: digits only, within int64.
            if not re.fullmatch(r"[0-9]+", value) or int(value) > 2**63 - 1:
                raise SelectorError(
                    f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer: {value}"
                )
            return Requirement(key, "gt" if op == ">" else "lt", (value,))
        if op in ("in", "notin"):
            return Requirement(key, op, self.value_set())
        raise SelectorError(
            f"found '{op}', expected: in, notin, =, ==, !=, gt, lt"
            if op not in _SPECIAL
            else f"found '{op}', expected: '=', '!=', '==', 'in', notin'"
        )

    def value_set(self) -> tuple[str, ...]:
        token = self.take()
        if token != "(":
            raise SelectorError(f"found '{token or 'end of string'}', expected: '('")
        if self.peek() == ")":
            self.take()
            return ("",)  # "k in ()" is the set holding the empty value, as labels.Parse reads it
        values: list[str] = []
        while True:
            token = self.peek()
            if token in (",", ")"):
                values.append("")
            elif token is None or token in _SPECIAL:
                raise SelectorError(f"found '{token or 'end of string'}', expected: ',', ')' or identifier")
            else:
                values.append(token)
                self.take()
            separator = self.take()
            if separator == ")":
                break
            if separator != ",":
                raise SelectorError(f"found '{separator or 'end of string'}', expected: ',' or ')'")
        for value in values:
            validate_value(value)
        return tuple(sorted(set(values)))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse `?labelSelector=`; raises SelectorError for what the real server answers 400 to."""
    parser = _Parser(text)
    requirements: list[Requirement] = []
    if parser.peek() is None:
        return LabelSelector()
    while True:
        requirements.append(parser.requirement())
        token = parser.take()
        if token is None:
            break
        if token != ",":
            raise SelectorError(f"found '{token}', expected: ',' or 'end of string'")
        if parser.peek() is None:
            raise SelectorError("found 'end of string', expected: identifier")
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


def matches_label_selector(selector: Mapping[str, Any], labels: Mapping[str, str] | None) -> bool:
    """Whether labels satisfy a metav1.LabelSelector object (one without requirements matches everything).

    The object is converted by the core's `selector_from_object`, which the Kubernetes layer's caches and
    this emulator's /scale (`format_label_selector`) also use; an invalid object raises SelectorError.
    """
    try:
        return selector_from_object(selector).matches(labels or {})
    except SelectorSyntaxError as err:
        raise SelectorError(str(err)) from err


# --------------------------------------------------------------------------------------------------------
# Field selectors
# --------------------------------------------------------------------------------------------------------

FieldGetter = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    equal: bool
    value: str


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], [], False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_field_selector(text: str, supported: Mapping[str, FieldGetter]) -> tuple[FieldRequirement, ...]:
    """Parse `?fieldSelector=` against the field labels a resource supports (400 for any other)."""
    out: list[FieldRequirement] = []
    for term in _split_unescaped(text, ","):
        if not term.strip():
            continue
        match = re.match(r"^((?:[^=!\\]|\\.)*)(!=|==|=)(.*)$", term)
        if match is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field = _unescape(match.group(1).strip())
        if field not in supported:
            raise SelectorError(f"field label not supported: {field}")
        out.append(FieldRequirement(field, match.group(2) != "!=", _unescape(match.group(3))))
    return tuple(out)


def matches_fields(
    obj: Mapping[str, Any], requirements: tuple[FieldRequirement, ...], getters: Mapping[str, FieldGetter]
) -> bool:
    return all((getters[r.field](obj) == r.value) == r.equal for r in requirements)


def path_getter(*path: str) -> FieldGetter:
    """A field getter reading a nested string field (missing or null reads as "")."""

    def get(obj: Mapping[str, Any]) -> str:
        value: Any = obj
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        return "" if value is None else str(value)

    return get
