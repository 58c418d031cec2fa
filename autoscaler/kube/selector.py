"""Label selectors in their string form (`app=web,tier in (a,b),!canary`), as a Scale's selector.

The pod cache answers "the pods of this target" from memory, so it must read the selector the way the API
server does (k8s.io/apimachinery/pkg/labels.Parse): `=`, `==`, `!=`, `in`, `notin`, `key` (exists), `!key`
(does not exist), `>` and `<` (integer comparison). This module must not talk to anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_KEY = r"[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(\s*([^)]*)\)\s*$")
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|!=|=|>|<)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class SelectorError(ValueError):
    """A selector string that the API server would refuse."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        op = self.operator
        if op == "=":
            return present and value == self.values[0]
        if op == "!=":
            return not present or value != self.values[0]
        if op == "in":
            return present and value in self.values
        if op == "notin":
            return not present or value not in self.values
        if op == "exists":
            return present
        if op == "!":
            return not present
        # > and <: both sides must be integers, as labels.Requirement.Matches has it.
        try:
            left, right = int(value or ""), int(self.values[0])
        except ValueError:
            return False
        return left > right if op == ">" else left < right


def _split(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _values(raw: str) -> tuple[str, ...]:
    return tuple(sorted({v.strip() for v in raw.split(",") if v.strip()}))


@dataclass(frozen=True, slots=True)
class Selector:
    """All requirements must hold; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @classmethod
    def parse(cls, text: str) -> Selector:
        text = text.strip()
        if not text:
            return cls()
        reqs: list[Requirement] = []
        for part in _split(text):
            if m := _SET.match(part):
                values = _values(m.group(3))
                if not values and m.group(2) == "in":
                    raise SelectorError(f"{part.strip()!r}: 'in' needs at least one value")
                reqs.append(Requirement(m.group(1), m.group(2), values))
            elif m := _EQ.match(part):
                op = "=" if m.group(2) == "==" else m.group(2)
                if op in (">", "<") and not re.fullmatch(r"-?\d+", m.group(3)):
                    raise SelectorError(f"{part.strip()!r}: {op} needs an integer")
                reqs.append(Requirement(m.group(1), op, (m.group(3),)))
            elif m := _EXISTS.match(part):
                reqs.append(Requirement(m.group(2), "!" if m.group(1) else "exists"))
            else:
                raise SelectorError(f"invalid label selector {text!r} near {part.strip()!r}")
        return cls(tuple(reqs))
