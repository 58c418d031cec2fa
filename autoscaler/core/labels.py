"""The label-selector string grammar of k8s.io/apimachinery/pkg/labels.Parse, and matching.

A Scale's `status.selector` is such a string ("app=web,tier in (a,b),!legacy"). The HPA parses it before
anything else and refuses the target ("InvalidSelector") when it does not parse; this module does the
same, and matches a pod's labels against the parsed requirements.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from autoscaler.core.errors import CoreError

_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class SelectorSyntaxError(CoreError):
    """The selector string does not parse; the message names the offending part."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        match self.operator:
            case "=" | "in":
                return present and value in self.values
            case "!=" | "notin":
                return not present or value not in self.values
            case "exists":
                return present
            case "!":
                return not present
            case "gt" | "lt":
                if not present:
                    return False
                try:
                    have, want = int(value), int(self.values[0])
                except ValueError:
                    return False
                return have > want if self.operator == "gt" else have < want
        return False  # pragma: no cover - operators are closed above


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _check_key(key: str) -> None:
    if not key:
        raise SelectorSyntaxError("a requirement has an empty key")
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise SelectorSyntaxError(f"invalid label key {key!r}: the prefix must be a DNS subdomain")
    if len(name) > 63 or not _NAME.match(name):
        raise SelectorSyntaxError(
            f"invalid label key {key!r}: name part must consist of alphanumeric characters, '-', '_' or "
            "'.', start and end with an alphanumeric character, and be at most 63 characters"
        )


def _check_value(value: str) -> None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise SelectorSyntaxError(
            f"invalid label value {value!r}: must be empty or consist of alphanumeric characters, '-', '_' "
            "or '.', start and end with an alphanumeric character, and be at most 63 characters"
        )


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorSyntaxError(f"unbalanced ')' in {text!r}")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise SelectorSyntaxError(f"unbalanced '(' in {text!r}")
    parts.append("".join(current))
    return parts


_SET_RE = re.compile(r"^(?P<key>[^\s=!<>()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_RE = re.compile(r"^(?P<key>[^\s=!<>()]+)\s*(?P<op>==|!=|=|>|<)\s*(?P<value>[^\s=!<>(),]*)$")


def _parse_requirement(part: str) -> Requirement:
    text = part.strip()
    if not text:
        raise SelectorSyntaxError("found an empty requirement (two commas in a row, or a trailing comma)")
    if text.startswith("!"):
        key = text[1:].strip()
        _check_key(key)
        return Requirement(key=key, operator="!")
    if match := _SET_RE.match(text):
        key, values = match["key"], tuple(v.strip() for v in match["values"].split(","))
        _check_key(key)
        if values == ("",):
            raise SelectorSyntaxError(f"{text!r}: for 'in' and 'notin' the set of values must not be empty")
        for value in values:
            _check_value(value)
        return Requirement(key=key, operator=match["op"], values=tuple(sorted(set(values))))
    if match := _EQ_RE.match(text):
        key, op, value = match["key"], match["op"], match["value"]
        _check_key(key)
        if op in (">", "<"):
            try:
                int(value)
            except ValueError:
                raise SelectorSyntaxError(f"{text!r}: for '>' and '<' the value must be an integer") from None
            return Requirement(key=key, operator="gt" if op == ">" else "lt", values=(value,))
        _check_value(value)
        return Requirement(key=key, operator="!=" if op == "!=" else "=", values=(value,))
    if any(c in text for c in " =!<>()"):
        raise SelectorSyntaxError(f"unable to parse requirement {text!r}")
    _check_key(text)
    return Requirement(key=text, operator="exists")


def parse_selector(text: str) -> Selector:
    """Parse a label-selector string as labels.Parse does; an empty string selects everything."""
    if not text.strip():
        return Selector(requirements=())
    requirements = tuple(_parse_requirement(part) for part in _split_top_level(text))
    return Selector(requirements=tuple(sorted(requirements, key=lambda r: r.key)))
