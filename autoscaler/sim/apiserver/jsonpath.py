"""The JSONPath subset of CRD printer columns: `.a.b`, `.a[0]`, `.a[*].b`, `.a[?(@.type=="Ready")].b`.

`find(obj, path)` returns every value the path reaches, in order (an empty list when nothing matches). It is
all that `tables` needs for additionalPrinterColumns; anything else in a path raises `ValueError`.
"""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(
    r"""\.(?P<field>(?:[^.\[\\]|\\.)+)
      |\[(?P<index>-?\d+|\*)\]
      |\[\?\(@\.(?P<filter_key>[\w.-]+)\s*(?P<filter_op>==|!=)\s*(?P<quote>['"])(?P<filter_value>.*?)(?P=quote)\)\]
    """,
    re.VERBOSE,
)


def _steps(path: str) -> list[re.Match[str]]:
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    steps, pos = [], 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {pos}")
        steps.append(match)
        pos = match.end()
    return steps


def find(obj: Any, path: str) -> list[Any]:
    values = [obj]
    for step in _steps(path):
        found: list[Any] = []
        for value in values:
            if step.group("field") is not None:
                key = re.sub(r"\\(.)", r"\1", step.group("field"))
                if isinstance(value, dict) and key in value:
                    found.append(value[key])
            elif step.group("index") is not None:
                if not isinstance(value, list):
                    continue
                if step.group("index") == "*":
                    found.extend(value)
                else:
                    index = int(step.group("index"))
                    if -len(value) <= index < len(value):
                        found.append(value[index])
            else:
                if not isinstance(value, list):
                    continue
                key, op, expected = step.group("filter_key"), step.group("filter_op"), step.group("filter_value")
                for item in value:
                    if isinstance(item, dict):
                        actual = str(item.get(key, ""))
                        if (actual == expected) == (op == "=="):
                            found.append(item)
        values = found
    return values
