"""What a create, an update, a status write or a scale write may change, per kind, as the real registry does.

- create: metadata is filled (uid, creationTimestamp, generation, name from generateName), status is reset
  for kinds with a /status subresource, and the few defaults and validations the autoscaler can trip on
  (workload replicas and selectors, required fields of events.k8s.io Events) apply.
- update: name, namespace, uid and creationTimestamp are kept; a stale metadata.resourceVersion is a 409
  Conflict; a custom resource must name its resourceVersion (422); the main resource keeps the old status,
  the /status subresource keeps everything but the status; generation follows spec changes.
- scale: the autoscaling/v1 Scale view of a workload or custom resource, and writes through it.

Functions take and return JSON dicts and raise `ApiError`; the store commits what they return.
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import datetime
from typing import Any

from autoscaler.core.deletion_cost import parse_cost
from autoscaler.core.labels import format_label_selector
from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.clock import timestamp
from autoscaler.sim.apiserver.resources import ResourceType
from autoscaler.sim.apiserver.selectors import SelectorError, matches_label_selector
from autoscaler.sim.apiserver.store import clone

JSON = dict[str, Any]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_WORKLOADS = {("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets")}
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def deletion_cost_value(value: Any) -> int | None:
    """The annotation's cost as GetDeletionCostFromPodAnnotations reads it, or None (the core owns the rule)."""
    return parse_cost(value)


def random_suffix(length: int = 5) -> str:
    """The suffix generateName adds: lowercase consonants and digits, as the real server picks."""
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=length))


def get_path(obj: Any, path: str) -> Any:
    """A value at a simple dotted path (`.spec.replicas`), or None."""
    for part in path.strip(".").split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def set_path(obj: JSON, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def _spec_part(obj: JSON) -> JSON:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _check_name(rtype: ResourceType, name: str) -> None:
    if len(name) > 253 or not _SUBDOMAIN.match(name):
        raise errors.invalid(
            rtype.group,
            rtype.kind,
            name,
            [
                (
                    "metadata.name",
                    f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case '
                    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                )
            ],
        )


def _check_kind(rtype: ResourceType, obj: JSON) -> None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if kind and kind != rtype.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rtype.kind})")
    if api_version and api_version != rtype.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({rtype.api_version})"
        )


def qos_class(spec: JSON) -> str:
    containers = spec.get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    if not any((r.get("requests") or r.get("limits")) for r in resources):
        return "BestEffort"
    guaranteed = all(
        (r.get("limits") or {}).get(name) is not None
        and (r.get("requests") or {}).get(name, (r.get("limits") or {}).get(name)) == (r.get("limits") or {})[name]
        for r in resources
        for name in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod_spec(spec: JSON) -> None:
    """The pod spec defaults `kubectl get -o yaml` shows on a real cluster (the ones that matter here)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for container in spec.get("containers") or []:
        image = str(container.get("image", ""))
        latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})


def _validate(rtype: ResourceType, obj: JSON, old: JSON | None) -> None:
    name = obj["metadata"]["name"]
    causes: list[tuple[str, str]] = []
    if (rtype.group, rtype.plural) in _WORKLOADS:
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        replicas = spec.get("replicas", 1)
        if not isinstance(replicas, int) or replicas < 0:
            causes.append(("spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"))
        if not selector:
            causes.append(("spec.selector", "Required value"))
        else:
            try:
                if not matches_label_selector(selector, labels):
                    causes.append(
                        (
                            "spec.template.metadata.labels",
                            f"Invalid value: {labels}: `selector` does not match template `labels`",
                        )
                    )
            except SelectorError as err:
                causes.append(("spec.selector", f"Invalid value: {err}"))
        if old is not None and selector != (old.get("spec") or {}).get("selector"):
            causes.append(("spec.selector", f"Invalid value: {selector}: field is immutable"))
    if rtype.plural == "pods" and not rtype.group:
        annotations = obj["metadata"].get("annotations") or {}
        if (
            DELETION_COST_ANNOTATION in annotations
            and deletion_cost_value(annotations[DELETION_COST_ANNOTATION]) is None
        ):
            value = annotations[DELETION_COST_ANNOTATION]
            causes.append((
                f"metadata.annotations[{DELETION_COST_ANNOTATION}]",
                f'Invalid value: "{value}": must be a 32bit integer',
            ))  # fmt: skip
    if rtype.group == "events.k8s.io":
        for field in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
            if not obj.get(field):
                causes.append((field, "Required value"))
    if causes:
        raise errors.invalid(rtype.group, rtype.kind, name, causes)


def _reset_status(rtype: ResourceType, obj: JSON) -> None:
    if rtype.plural == "pods" and not rtype.group:
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}
    elif rtype.plural == "customresourcedefinitions":
        spec = obj.get("spec") or {}
        obj["status"] = {
            "acceptedNames": spec.get("names") or {},
            "storedVersions": [v["name"] for v in spec.get("versions") or [] if v.get("storage")],
            "conditions": [
                {"type": t, "status": "True", "reason": r, "message": m,
                 "lastTransitionTime": obj["metadata"]["creationTimestamp"]}
                for t, r, m in (
                    ("NamesAccepted", "NoConflicts", "no conflicts found"),
                    ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                )
            ],
        }  # fmt: skip
    elif rtype.custom:
        obj.pop("status", None)
    else:
        obj["status"] = {}


def _default(rtype: ResourceType, obj: JSON) -> None:
    """The defaults the real server fills in when it decodes a body (on create and on update)."""
    if (rtype.group, rtype.plural) in _WORKLOADS:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if rtype.plural == "deployments":
            spec.setdefault("progressDeadlineSeconds", 600)
            spec.setdefault(
                "strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
            )
        if rtype.plural == "statefulsets":
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        default_pod_spec(spec.setdefault("template", {}).setdefault("spec", {}))
    if rtype.plural == "pods" and not rtype.group:
        default_pod_spec(obj.setdefault("spec", {}))


def prepare_create(rtype: ResourceType, obj: JSON, namespace: str, now: datetime) -> JSON:
    """The object a create stores (see the module docstring)."""
    if not isinstance(obj, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    _check_kind(rtype, obj)
    obj = clone(obj)
    obj["apiVersion"], obj["kind"] = rtype.api_version, rtype.kind
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if rtype.namespaced:
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    if not meta.get("name"):
        if not meta.get("generateName"):
            raise errors.invalid(
                rtype.group, rtype.kind, "", [("metadata.name", "Required value: name or generateName is required")]
            )
        meta["name"] = meta["generateName"] + random_suffix()
    _check_name(rtype, meta["name"])
    for transient in (
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    ):
        meta.pop(transient, None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = timestamp(now)
    if rtype.generation:
        meta["generation"] = 1
    if rtype.status:
        _reset_status(rtype, obj)
    _default(rtype, obj)
    _validate(rtype, obj, None)
    return obj


def check_resource_version(rtype: ResourceType, old: JSON, new_rv: str | None, name: str) -> None:
    if new_rv and new_rv != old["metadata"].get("resourceVersion"):
        raise errors.conflict(rtype.group, rtype.plural, name)


def prepare_update(rtype: ResourceType, old: JSON, new: JSON, *, name: str, subresource: str = "") -> JSON:
    """The object an update (of the object, or of its /status) stores, or an ApiError."""
    if not isinstance(new, dict) or not isinstance(new.get("metadata", {}), dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    _check_kind(rtype, new)
    meta = new.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    old_meta = old["metadata"]
    if rtype.namespaced and meta.get("namespace") and meta["namespace"] != old_meta.get("namespace"):
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    new_rv = meta.get("resourceVersion")
    check_resource_version(rtype, old, new_rv, name)
    if rtype.custom and not new_rv:  # customResourceStrategy.AllowUnconditionalUpdate is false (also for /status)
        raise errors.invalid(
            rtype.group,
            rtype.kind,
            name,
            [("metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update")],
        )
    if subresource == "status":
        result = clone(old)
        if "status" in new:
            result["status"] = clone(new["status"])
        else:
            result.pop("status", None)
        return result
    result = clone(new)
    result["apiVersion"], result["kind"] = rtype.api_version, rtype.kind
    result_meta = result.setdefault("metadata", {})
    for kept in ("name", "namespace", "uid", "creationTimestamp", "generation", "deletionTimestamp"):
        if kept in old_meta:
            result_meta[kept] = old_meta[kept]
        else:
            result_meta.pop(kept, None)
    result_meta.pop("managedFields", None)
    if rtype.status:
        if "status" in old:
            result["status"] = clone(old["status"])
        else:
            result.pop("status", None)
    _default(rtype, result)
    if rtype.generation and _spec_part(result) != _spec_part(old):
        result_meta["generation"] = int(old_meta.get("generation", 0)) + 1
    _validate(rtype, result, old)
    return result


# --------------------------------------------------------------------------------------------------------
# The scale subresource
# --------------------------------------------------------------------------------------------------------


def to_scale(rtype: ResourceType, obj: JSON) -> JSON:
    """The autoscaling/v1 Scale of a workload or custom resource."""
    assert rtype.scale is not None
    meta = obj["metadata"]
    if rtype.custom:
        replicas = get_path(obj, rtype.scale.spec_replicas)
        status_replicas = get_path(obj, rtype.scale.status_replicas) or 0
        selector = get_path(obj, rtype.scale.label_selector) if rtype.scale.label_selector else None
    else:
        replicas = (obj.get("spec") or {}).get("replicas")
        status_replicas = (obj.get("status") or {}).get("replicas") or 0
        selector = format_label_selector((obj.get("spec") or {}).get("selector"))
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
    status: JSON = {"replicas": status_replicas}
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": replicas} if replicas is not None else {},
        "status": status,
    }


def apply_scale(rtype: ResourceType, old: JSON, scale: JSON, *, name: str) -> JSON:
    """The object after a write of its Scale (spec.replicas only); 409 on a stale resourceVersion."""
    assert rtype.scale is not None
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    meta = scale.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    check_resource_version(rtype, old, meta.get("resourceVersion"), name)
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "autoscaling",
            "Scale",
            name,
            [("spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")],
        )
    result = clone(old)
    path = rtype.scale.spec_replicas if rtype.custom else ".spec.replicas"
    if get_path(result, path) != replicas:
        set_path(result, path, replicas)
        if rtype.generation:
            result["metadata"]["generation"] = int(result["metadata"].get("generation", 0)) + 1
    return result


__all__ = [
    "apply_scale",
    "default_pod_spec",
    "get_path",
    "prepare_create",
    "prepare_update",
    "random_suffix",
    "to_scale",
]
