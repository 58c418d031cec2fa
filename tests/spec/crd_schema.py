"""The CRD's openAPIV3Schema applied offline, as the API server applies it to a PrometheusAutoscaler.

Structural rules (types, required, enum, bounds, patterns, int-or-string) through `jsonschema` (draft 4,
whose integers and exclusive bounds match OpenAPI v3.0); unknown fields are errors, as with kubectl's
default strict field validation (the API server would otherwise prune them); `x-kubernetes-validations`
rules through a CEL evaluator (`celpy`, PyPI's cel-python). A problem is (field path, message), the path
written as the API server writes it ("spec.metrics[0].resource.target.averageValue").
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml

CRD_PATH = Path(__file__).resolve().parents[2] / "autoscaler" / "kube" / "crd.yaml"


def openapi_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD_PATH.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert isinstance(schema, dict)
    return schema


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy in which every object with known properties refuses others (strict field validation)."""
    out = copy.deepcopy(schema)
    stack = [out]
    while stack:
        node = stack.pop()
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            node.setdefault("additionalProperties", False)
        stack.extend(node.get("properties", {}).values())
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append(node[key])
    return out


def _path(parts: Any) -> str:
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


# The schema errors after which the API server does not run a custom resource's CEL rules: hasBlockingErr in
# apiextensions-apiserver's pkg/registry/customresource/strategy.go (TypeInvalid, Required, NotSupported,
# TooLong, TooMany), and an unknown field, which strict field validation refuses while decoding. A pattern
# or a bound (Invalid) does not stop them. An int-or-string that is neither fails `anyOf`: a type error.
BLOCKING = frozenset({"type", "anyOf", "required", "enum", "maxLength", "maxItems", "additionalProperties"})


def structural_problems(obj: Any, schema: dict[str, Any]) -> list[tuple[str, str]]:
    return [(path, message) for path, message, _ in _structural(obj, schema)]


def _structural(obj: Any, schema: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """Each schema problem, and whether it is one that stops the CEL rules."""
    validator = jsonschema.Draft4Validator(_strict(schema))
    problems = []
    for error in validator.iter_errors(obj):
        # JSON decodes an integer beyond int64 as a float, which is not of type integer: a type error too.
        beyond_int64 = isinstance(error.instance, int) and not -(2**63) <= error.instance < 2**63
        blocking = error.validator in BLOCKING or beyond_int64
        path = _path(error.absolute_path)
        if error.validator == "required":
            for name in error.validator_value:
                if isinstance(error.instance, dict) and name not in error.instance:
                    problems.append((_join(path, name), "Required value", blocking))
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = set(error.schema.get("properties", {}))
            problems += [
                (_join(path, name), "field not declared in schema", blocking)
                for name in error.instance
                if name not in known
            ]
        else:
            problems.append((path, error.message, blocking))
    return problems


_ENV = celpy.Environment()


def _cel(rule: str, value: Any) -> bool:
    program = _ENV.program(_ENV.compile(rule))
    return bool(program.evaluate({"self": celpy.json_to_cel(value)}))


def cel_problems(obj: Any, schema: dict[str, Any], path: str = "") -> list[tuple[str, str]]:
    """Every x-kubernetes-validations rule on the nodes present in `obj`, depth first."""
    problems = []
    for rule in schema.get("x-kubernetes-validations", ()):
        if not _cel(rule["rule"], obj):
            problems.append((path + rule.get("fieldPath", ""), rule["message"]))
    if isinstance(obj, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in obj:
                problems += cel_problems(obj[name], sub, _join(path, name))
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(obj):
            problems += cel_problems(item, schema["items"], f"{path}[{i}]")
    return problems


def crd_problems(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """What the API server would refuse in `obj` (a whole PrometheusAutoscaler) on create."""
    schema = openapi_schema()
    structural = _structural(obj, schema)
    problems = [(path, message) for path, message, _ in structural]
    if not any(blocking for _, _, blocking in structural):  # as the API server: see BLOCKING
        problems += cel_problems(obj, schema)
    return problems
