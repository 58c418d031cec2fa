"""The three PATCH bodies kubectl and the client send: JSON merge patch, JSON patch, strategic merge patch.

- `application/merge-patch+json` (RFC 7386): objects merge, `null` deletes, lists replace.
- `application/json-patch+json` (RFC 6902): add, remove, replace, move, copy, test.
- `application/strategic-merge-patch+json`: a merge patch where lists of objects with a known merge key
  (containers by `name`, ports by `containerPort`, conditions by `type`, ...) merge element by element, and
  `$patch: delete|replace` directives apply. Built-in kinds only; the server answers 415 for custom resources.

All functions are pure: they return a new document and raise `PatchError` for a patch that cannot apply.
"""

from __future__ import annotations

import copy
from typing import Any

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

# Merge keys of the list fields kubectl's strategic merge patches touch (from the patchMergeKey tags of
# k8s.io/api). A list not named here is replaced as a whole, as atomic lists are.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
}
_SET_LISTS = {"finalizers"}


class PatchError(ValueError):
    """A patch that does not apply. `code` is the HTTP status the real server answers (400 or 422)."""

    def __init__(self, message: str, *, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --------------------------------------------------------------------------------------------------------
# RFC 6902
# --------------------------------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer: {path!r}", code=400)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit():
        raise PatchError(f"invalid array index: {token!r}")
    index = int(token)
    limit = len(container) if for_add else len(container) - 1
    if index > limit:
        raise PatchError(f"array index out of bounds: {index}")
    return index


def _parent(doc: Any, parts: list[str]) -> Any:
    node = doc
    for token in parts[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, for_add=False)]
        else:
            raise PatchError(f"doc is missing path: /{'/'.join(parts)}")
    return node


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    parent = _parent(doc, parts)
    token = parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"doc is missing key: /{'/'.join(parts)}")
        return parent[token]
    if isinstance(parent, list):
        return parent[_index(parent, token, for_add=False)]
    raise PatchError(f"doc is missing path: /{'/'.join(parts)}")


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _parent(doc, parts)
    token = parts[-1]
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"unable to remove nonexistent key: {token}: missing value")
        return parent.pop(token)
    if isinstance(parent, list):
        return parent.pop(_index(parent, token, for_add=False))
    raise PatchError(f"doc is missing path: /{'/'.join(parts)}")


def _add(doc: Any, parts: list[str], value: Any, *, replace: bool) -> Any:
    if not parts:
        return value
    parent = _parent(doc, parts)
    token = parts[-1]
    if isinstance(parent, dict):
        if replace and token not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: /{'/'.join(parts)}")
        parent[token] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(parent, token, for_add=False)] = value
        else:
            parent.insert(_index(parent, token, for_add=True), value)
    else:
        raise PatchError(f"doc is missing path: /{'/'.join(parts)}")
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations", code=400)
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid json patch operation: {op!r}", code=400)
        kind, parts = op["op"], _pointer(op["path"])
        if kind in ("add", "replace"):
            if "value" not in op:
                raise PatchError(f"{kind} operation has no value", code=400)
            doc = _add(doc, parts, copy.deepcopy(op["value"]), replace=kind == "replace")
        elif kind == "remove":
            _remove(doc, parts)
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, parts, value, replace=False)
        elif kind == "test":
            if _get(doc, parts) != op.get("value"):
                raise PatchError(f"testing value {op['path']} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}", code=400)
    return doc


# --------------------------------------------------------------------------------------------------------
# Strategic merge patch
# --------------------------------------------------------------------------------------------------------


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """A strategic merge patch over the list fields of `_MERGE_KEYS` (other lists are replaced)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [item for item in result.get(field) or [] if item not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in _MERGE_KEYS:
            result[key] = _merge_list(result.get(key) or [], value, _MERGE_KEYS[key])
        elif isinstance(value, list) and key in _SET_LISTS:
            merged = list(result.get(key) or [])
            merged += [item for item in value if item not in merged]
            result[key] = merged
        else:
            merged_value = strategic_merge_patch(result.get(key), value)
            if merged_value is None:
                result.pop(key, None)
            else:
                result[key] = merged_value
    return result


def _merge_list(current: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    result = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {merge_key}", code=400)
        position = next(
            (i for i, old in enumerate(result) if isinstance(old, dict) and old.get(merge_key) == item[merge_key]),
            None,
        )
        if item.get("$patch") == "delete":
            if position is not None:
                result.pop(position)
            continue
        if position is None:
            result.append({k: copy.deepcopy(v) for k, v in item.items() if k != "$patch"})
        else:
            result[position] = strategic_merge_patch(result[position], item)
    return result
