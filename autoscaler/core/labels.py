"""The label-selector string grammar of k8s.io/apimachinery/pkg/labels.Parse, matching, and formatting.

A Scale's `status.selector` is such a string ("app=web,tier in (a,b),!legacy"). The HPA parses it before
anything else and refuses the target ("InvalidSelector") when it does not parse; this module does the
same, and matches a pod's labels against the parsed requirements. The API server writes that string from a
workload's `spec.selector` object; `format_label_selector` writes exactly the same string, for every layer
that derives a /scale view from a workload object (the Kubernetes layer's caches, the API emulator).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from autoscaler.core.errors import CoreError

_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class SelectorSyntaxError(CoreError):
    """The selector (a string, or a LabelSelector object) is invalid; the message names the offending part."""


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
        # "k in ()" is the set holding the empty value, as labels.Parse reads it (parseValues).
        for value in values:
            _check_value(value)
        return Requirement(key=key, operator=match["op"], values=tuple(sorted(set(values))))
    if match := _EQ_RE.match(text):
        key, op, value = match["key"], match["op"], match["value"]
        _check_key(key)
        if op in (">", "<"):
            # NewRequirement: strconv.ParseInt must read it, and it must still be a label value, so only digits
            # (no sign, no spaces, no Python underscores) within int64.
            if not value.isascii() or not value.isdigit() or int(value) > 2**63 - 1:
                raise SelectorSyntaxError(f"{text!r}: for '>' and '<' the value must be an integer")
            return Requirement(key=key, operator="gt" if op == ">" else "lt", values=(value,))
        _check_value(value)
        return Requirement(key=key, operator="!=" if op == "!=" else "=", values=(value,))
    if any(c in text for c in " =!<>()"):
        raise SelectorSyntaxError(f"unable to parse requirement {text!r}")
    _check_key(text)
    return Requirement(key=text, operator="exists")


def parse_selector(text: str) -> Selector:
    """Parse a label-selector string as labels.Parse does; an empty string selects everything.

    Each text is parsed once while it is among the last `SELECTOR_MEMO` texts asked for (the result is
    immutable): every tick asks again for every target's selector, to validate it and for the
    ambiguous-selector check, so a memo smaller than the number of targets would miss every time. A text that
    does not parse is parsed again each time (its error is not kept).
    """
    return _parsed(text)


# Far more than the daemon's target goal (10,000): ~0.6 KiB each.
SELECTOR_MEMO = 65536


@lru_cache(maxsize=SELECTOR_MEMO)
def _parsed(text: str) -> Selector:
    if not text.strip():
        return Selector(requirements=())
    requirements = tuple(_parse_requirement(part) for part in _split_top_level(text))
    return Selector(requirements=tuple(sorted(requirements, key=lambda r: r.key)))


# LabelSelector objects (metav1.LabelSelector) and their string form.

_EXPRESSION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def _strings(value: object, *, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SelectorSyntaxError(f"{path}: must be a list of strings, not {value!r}")
    return tuple(value)


def _expression(expression: object, *, path: str) -> Requirement:
    if not isinstance(expression, Mapping):
        raise SelectorSyntaxError(f"{path}: must be an object with key, operator and values, not {expression!r}")
    key, operator = expression.get("key"), expression.get("operator")
    values = _strings(expression.get("values"), path=f"{path}.values")
    if not isinstance(key, str):
        raise SelectorSyntaxError(f"{path}.key: must be a string, not {key!r}")
    if operator not in _EXPRESSION_OPERATORS:
        raise SelectorSyntaxError(
            f"{path}.operator: {operator!r} is not a valid label selector operator (In, NotIn, Exists, DoesNotExist)"
        )
    if operator in ("In", "NotIn") and not values:
        raise SelectorSyntaxError(f"{path}.values: must not be empty for the operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorSyntaxError(f"{path}.values: must be empty for the operator {operator}, not {list(values)!r}")
    _check_key(key)
    for value in values:
        _check_value(value)
    return Requirement(key=key, operator=_EXPRESSION_OPERATORS[operator], values=values)


def selector_from_object(selector: Mapping[str, Any]) -> Selector:
    """A metav1.LabelSelector object (camelCase JSON) as metav1.LabelSelectorAsSelector converts it.

    An object without requirements selects everything. Requirements are sorted by key, stably: matchLabels
    first, then matchExpressions in their order, as Go's sort of upstream's requirements leaves them (its
    insertion sort, for up to 12 requirements). Values keep their order and duplicates; only their string
    form sorts them. Invalid operators, keys, values and value counts raise SelectorSyntaxError naming the
    field, where upstream's NewRequirement refuses them.
    """
    if not isinstance(selector, Mapping):
        raise SelectorSyntaxError(f"a label selector must be an object, not {selector!r}")
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise SelectorSyntaxError(f"matchLabels: must be an object of strings, not {match_labels!r}")
    if not isinstance(expressions, list):
        raise SelectorSyntaxError(f"matchExpressions: must be a list, not {expressions!r}")
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SelectorSyntaxError(f"matchLabels: {key!r}: {value!r}: keys and values must be strings")
        _check_key(key)
        _check_value(value)
        requirements.append(Requirement(key=key, operator="=", values=(value,)))
    for index, expression in enumerate(expressions):
        requirements.append(_expression(expression, path=f"matchExpressions[{index}]"))
    return Selector(requirements=tuple(sorted(requirements, key=lambda r: r.key)))


def _requirement_text(requirement: Requirement) -> str:
    """labels.Requirement.String(): `k=v`, `k in (a,b)` with the values sorted, `k`, `!k`."""
    values = ",".join(sorted(requirement.values))
    match requirement.operator:
        case "exists":
            return requirement.key
        case "!":
            return f"!{requirement.key}"
        case "in" | "notin":
            return f"{requirement.key} {requirement.operator} ({values})"
        case "gt" | "lt":
            return f"{requirement.key}{'>' if requirement.operator == 'gt' else '<'}{values}"
    return f"{requirement.key}{requirement.operator}{values}"  # "=" and "!="


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """The string the API server puts in /scale's `status.selector`: LabelSelectorAsSelector(s).String().

    Requirements joined by commas, in the order of `selector_from_object`; no selector, or one without
    requirements, is the empty string (upstream prints both labels.Nothing() and labels.Everything() as "").
    """
    if selector is None:
        return ""
    return ",".join(_requirement_text(r) for r in selector_from_object(selector).requirements)
