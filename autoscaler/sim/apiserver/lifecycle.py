"""The pod lifecycle model: what the deployment, ReplicaSet and StatefulSet controllers and the kubelet do.

A Deployment gets one ReplicaSet per pod template (see `deployments`). Every ReplicaSet and StatefulSet
keeps `spec.replicas` pods it owns (ownerReferences with controller: true), labelled and specified from its
pod template (see `pods`). A new pod
is Pending (scheduled, containers creating), Running after its start delay, and Ready after a further
readiness delay; its conditions carry the exact transition times. Scale-down removes pods in the order the
ReplicaSet controller prefers (`pods.deletion_rank`: unscheduled, pending, not ready, lowest
pod-deletion-cost, most recently ready, newest; a StatefulSet removes its highest ordinals), at once or, with
a termination grace period, after a time as Terminating (deletionTimestamp set, not ready). The workload's
status follows its active pods. A Deployment rolls a new template out within maxSurge and maxUnavailable
(see `deployments`).

Delays come from `set_delays()`, else the workload's annotations (`sim.autoscaler.dev/start-delay-seconds`,
`sim.autoscaler.dev/ready-delay-seconds`, `sim.autoscaler.dev/termination-grace-seconds`), else the model's
defaults; a pod keeps the start and readiness delays it was born with. Once a pod's status is written through
the API (a test making a pod unready, say), the model leaves that status as written. Time is the injected
clock's: `tick()` moves pods along (tests call it after advancing a FakeClock; the standalone server calls
it from a background thread). Writes go straight to the store, as a controller's would, and every change
shows up in watches.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from autoscaler.sim.apiserver import errors
from autoscaler.sim.apiserver.clock import Clock, parse_timestamp, timestamp
from autoscaler.sim.apiserver.deployments import (
    HASH_LABEL,
    ReplicaSetView,
    new_replica_set,
    new_replica_set_replicas,
    old_replica_set_replicas,
    revision,
    rolling_bounds,
    scaled_message,
    template_hash,
)
from autoscaler.sim.apiserver.pods import (
    READY_DELAY_ANNOTATION,
    START_DELAY_ANNOTATION,
    TERMINATION_ANNOTATION,
    deletion_rank,
    new_pod,
    ordinal,
    pod_status,
)
from autoscaler.sim.apiserver.recorder import EventRecorder
from autoscaler.sim.apiserver.resources import Registry, ResourceType
from autoscaler.sim.apiserver.store import Store, WatchEvent
from autoscaler.sim.apiserver.workload_status import workload_status

JSON = dict[str, Any]
WorkloadKey = tuple[str, str, str]  # (plural, namespace, name)

_WORKLOAD_PLURALS = {"Deployment": "deployments", "StatefulSet": "statefulsets", "ReplicaSet": "replicasets"}


@dataclass(frozen=True, slots=True)
class Delays:
    start_seconds: float
    ready_seconds: float
    termination_seconds: float = 0.0


def _controller(obj: JSON) -> tuple[str, str] | None:
    """(kind, name) of an object's controller ownerReference, if it has one."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind", "")), str(ref.get("name", ""))
    return None


def _is_ready(pod: JSON) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class PodLifecycle:
    """Keeps each workload's pods and status in line with its spec (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        registry: Registry,
        clock: Clock,
        *,
        start_delay_seconds: float = 0.0,
        ready_delay_seconds: float = 0.0,
        termination_grace_seconds: float = 0.0,
        emit_events: bool = True,
    ) -> None:
        self._store = store
        self._registry = registry
        self._clock = clock
        self._defaults = Delays(start_delay_seconds, ready_delay_seconds, termination_grace_seconds)
        self._overrides: dict[WorkloadKey, Delays] = {}
        self._recorder = EventRecorder(store, registry, clock, enabled=emit_events)
        self._lock = threading.RLock()
        self._local = threading.local()
        self._dirty: set[WorkloadKey] = set()
        self._next_ip = 0
        self._written: dict[str, JSON] = {}  # pod uid -> the status the model last wrote
        self._timed: set[WorkloadKey] = set()  # workloads whose pods time will still change
        store.subscribe(self._on_change)

    def _type(self, group: str, plural: str) -> ResourceType:
        rtype = self._registry.lookup(group, "v1", plural)
        assert rtype is not None, plural
        return rtype

    # -- the Python API ---------------------------------------------------------------------------------

    def set_delays(
        self,
        kind: str,
        name: str,
        *,
        namespace: str = "default",
        start_delay_seconds: float,
        ready_delay_seconds: float,
        termination_grace_seconds: float = 0.0,
    ) -> None:
        """Delays for one workload's pods (kind: Deployment, StatefulSet, ReplicaSet): start and readiness
        for pods created from now on; the time a pod removed by a scale-down stays Terminating."""
        key = (_WORKLOAD_PLURALS[kind], namespace, name)
        self._overrides[key] = Delays(start_delay_seconds, ready_delay_seconds, termination_grace_seconds)

    def tick(self, *, everything: bool = False) -> None:
        """Move pods along to the clock's now: those of the workloads with pods still starting or terminating
        (the only ones time can change; every write reconciles its workload at once), or of every workload."""
        keys: set[WorkloadKey] = set(self._timed)
        if everything:
            for plural in _WORKLOAD_PLURALS.values():
                items, _ = self._store.list(self._type("apps", plural), None)
                keys.update((plural, o["metadata"]["namespace"], o["metadata"]["name"]) for o in items)
        self._request(keys)

    # -- reacting to changes ----------------------------------------------------------------------------

    def _on_change(self, event: WatchEvent) -> None:
        group, plural = event.key
        meta = event.object.get("metadata") or {}
        if group == "apps" and plural in _WORKLOAD_PLURALS.values():
            keys = {(plural, event.namespace, meta["name"])}
            owner = _controller(event.object)
            if owner is not None and owner[0] == "Deployment":
                keys.add(("deployments", event.namespace, owner[1]))
            if event.type == "DELETED":
                self._request(keys, orphans=(meta.get("uid", ""), event.namespace))
            else:
                self._request(keys)
        elif (group, plural) == ("", "pods") and event.type == "DELETED":
            self._written.pop(meta.get("uid", ""), None)
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") in _WORKLOAD_PLURALS:
                    self._request({(_WORKLOAD_PLURALS[ref["kind"]], event.namespace, ref.get("name", ""))})

    def _request(self, keys: set[WorkloadKey], *, orphans: tuple[str, str] | None = None) -> None:
        with self._lock:
            self._dirty.update(keys)
            if orphans is not None:
                self._delete_orphans(*orphans)
            if getattr(self._local, "draining", False):
                return  # a change caused by the reconcile in progress on this thread: it is queued
            self._local.draining = True
            try:
                while self._dirty:
                    self._reconcile(*self._dirty.pop())
            finally:
                self._local.draining = False

    def _delete_orphans(self, owner_uid: str, namespace: str) -> None:
        """The garbage collector's part: a deleted workload's ReplicaSets and pods go with it."""
        for rtype in (self._type("apps", "replicasets"), self._type("", "pods")):
            for obj in self._store.owned_by(rtype, owner_uid):
                self._delete_pod(rtype, obj)

    # -- reconciling one workload -----------------------------------------------------------------------

    def _delays(self, key: WorkloadKey, workload: JSON) -> Delays:
        owner = _controller(workload)
        if owner is not None and owner[0] == "Deployment":
            # A Deployment's ReplicaSets run its pods with the Deployment's delays.
            deployment = self._store.find(self._type("apps", "deployments"), key[1], owner[1])
            if deployment is not None:
                return self._delays(("deployments", key[1], owner[1]), deployment)
        if key in self._overrides:
            return self._overrides[key]
        notes = workload["metadata"].get("annotations") or {}
        try:
            return Delays(
                float(notes.get(START_DELAY_ANNOTATION, self._defaults.start_seconds)),
                float(notes.get(READY_DELAY_ANNOTATION, self._defaults.ready_seconds)),
                float(notes.get(TERMINATION_ANNOTATION, self._defaults.termination_seconds)),
            )
        except ValueError:
            return self._defaults

    def _reconcile(self, plural: str, namespace: str, name: str) -> None:
        if plural == "deployments":
            self._reconcile_deployment(namespace, name)
            return
        rtype = self._type("apps", plural)
        workload = self._store.find(rtype, namespace, name)
        if workload is None:
            self._timed.discard((plural, namespace, name))
            return
        pods_type = self._type("", "pods")
        pods = self._store.owned_by(pods_type, workload["metadata"]["uid"])
        desired = int((workload.get("spec") or {}).get("replicas", 1))
        delays = self._delays((plural, namespace, name), workload)
        now = self._clock.now()
        terminating = []
        for pod in pods:
            ends = pod["metadata"].get("deletionTimestamp")
            if ends and now >= parse_timestamp(ends):
                self._delete_pod(pods_type, pod)
            elif ends:
                terminating.append(pod)
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        if len(active) > desired:
            if plural == "statefulsets":
                victims = sorted(active, key=lambda p: -ordinal(p["metadata"]["name"]))
            else:
                victims = sorted(active, key=deletion_rank)
            for pod in victims[: len(active) - desired]:
                if delays.termination_seconds > 0:
                    terminating.append(self._terminate(pods_type, pod, now, delays.termination_seconds))
                else:
                    self._delete_pod(pods_type, pod)
                self._recorder.pod_event(workload, pod["metadata"]["name"], deleted=True)
                active.remove(pod)
        while len(active) < desired:
            pod = new_pod(
                workload,
                existing=active + terminating,
                start_seconds=delays.start_seconds,
                ready_seconds=delays.ready_seconds,
                now=self._clock.now(),
                ip=self._ip(),
            )
            created = self._store.create(pods_type, pod)
            self._written[created["metadata"]["uid"]] = created["status"]
            active.append(created)
            self._recorder.pod_event(workload, pod["metadata"]["name"], deleted=False)
        for index, pod in enumerate(active):
            active[index] = self._advance(pods_type, pod, now)
        self._write_status(rtype, workload, active, now)
        starting = any(self._written.get(p["metadata"]["uid"]) == p.get("status") and not _is_ready(p) for p in active)
        if starting or terminating:
            self._timed.add((plural, namespace, name))
        else:
            self._timed.discard((plural, namespace, name))

    def _reconcile_deployment(self, namespace: str, name: str) -> None:
        """One ReplicaSet per template; the current one stepped up and the others down (see `deployments`)."""
        rtype, rs_type = self._type("apps", "deployments"), self._type("apps", "replicasets")
        deployment = self._store.find(rtype, namespace, name)
        if deployment is None:
            return
        spec = deployment.get("spec") or {}
        desired = int(spec.get("replicas", 1))
        bounds = rolling_bounds(deployment)
        pod_hash = template_hash(spec.get("template"))
        owned = self._store.owned_by(rs_type, deployment["metadata"]["uid"])
        owned.sort(key=lambda r: (r["metadata"].get("creationTimestamp", ""), revision(r)))
        current = next((r for r in owned if (r["metadata"].get("labels") or {}).get(HASH_LABEL) == pod_hash), None)
        pods_type = self._type("", "pods")
        views = {r["metadata"]["uid"]: self._view(pods_type, r) for r in owned}
        if current is None:
            number = max((revision(r) for r in owned), default=0) + 1
            replicas = desired
            if bounds is not None:
                empty = ReplicaSetView("", 0, 0)
                replicas = new_replica_set_replicas(
                    desired=desired, max_surge=bounds[0], new=empty, old=list(views.values())
                )
            built = new_replica_set(deployment, pod_hash, replicas=replicas, number=number, now=self._clock.now())
            current = self._store.create(rs_type, built)
            owned.append(current)
            views[current["metadata"]["uid"]] = self._view(pods_type, current)
            message = scaled_message(current["metadata"]["name"], 0, replicas)
            self._recorder.event(deployment, "ScalingReplicaSet", message, "deployment-controller")
        old = [r for r in owned if r is not current]
        targets = self._rollout_targets(desired, bounds, views[current["metadata"]["uid"]], old, views)
        for replica_set in owned:
            target = targets.get(replica_set["metadata"]["uid"])
            replicas = int((replica_set.get("spec") or {}).get("replicas", 0))
            if target is not None and replicas != target:
                self._scale_replica_set(rs_type, deployment, replica_set, replicas, target)
        active, updated = [], 0
        for replica_set in owned:
            pods = [p for p in self._store.owned_by(pods_type, replica_set["metadata"]["uid"])
                    if not p["metadata"].get("deletionTimestamp")]  # fmt: skip
            active += pods
            updated += len(pods) if replica_set is current else 0
        self._write_status(rtype, deployment, active, self._clock.now(), updated=updated,
                           replica_set=current["metadata"]["name"])  # fmt: skip

    def _view(self, pods_type: ResourceType, replica_set: JSON) -> ReplicaSetView:
        """A ReplicaSet's spec.replicas and its ready pods (available: minReadySeconds is not modelled)."""
        pods = self._store.owned_by(pods_type, replica_set["metadata"]["uid"])
        ready = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp") and _is_ready(p))
        replicas = int((replica_set.get("spec") or {}).get("replicas", 0))
        return ReplicaSetView(replica_set["metadata"]["uid"], replicas, ready)

    @staticmethod
    def _rollout_targets(
        desired: int,
        bounds: tuple[int, int] | None,
        new: ReplicaSetView,
        old: list[JSON],
        views: dict[str, ReplicaSetView],
    ) -> dict[str, int]:
        """The replicas each ReplicaSet (by uid) should have now: one step of the rollout, as one sync does."""
        old_views = [views[r["metadata"]["uid"]] for r in old]
        if bounds is None:  # Recreate (simplified: at once)
            return {new.name: desired} | {v.name: 0 for v in old_views}
        if not any(v.replicas for v in old_views):
            return {new.name: desired}  # no rollout in progress: the one set follows the Deployment
        step = new_replica_set_replicas(desired=desired, max_surge=bounds[0], new=new, old=old_views)
        if step != new.replicas:
            return {new.name: step}  # rolloutRolling returns after scaling the new set; the next sync goes on
        counts = old_replica_set_replicas(desired=desired, max_unavailable=bounds[1], new=new, old=old_views)
        return counts

    def _scale_replica_set(
        self, rs_type: ResourceType, deployment: JSON, replica_set: JSON, old: int, new: int
    ) -> None:
        def change(current: JSON) -> JSON:
            current["spec"]["replicas"] = new
            current["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = str(
                (deployment.get("spec") or {}).get("replicas", 1)
            )
            return current

        meta = replica_set["metadata"]
        with contextlib.suppress(errors.ApiError):  # deleted meanwhile
            self._store.modify(rs_type, meta["namespace"], meta["name"], change)
            self._recorder.event(
                deployment, "ScalingReplicaSet", scaled_message(meta["name"], old, new), "deployment-controller"
            )

    def _terminate(self, pods_type: ResourceType, pod: JSON, now: datetime, grace: float) -> JSON:
        """Graceful deletion: deletionTimestamp set to the end of the grace period, readiness lost at once."""

        def change(current: JSON) -> JSON:
            meta = current["metadata"]
            meta["deletionTimestamp"] = timestamp(now + timedelta(seconds=grace))
            meta["deletionGracePeriodSeconds"] = int(grace)
            status = current.setdefault("status", {})
            for condition in status.get("conditions") or []:
                if condition.get("type") in ("Ready", "ContainersReady") and condition.get("status") == "True":
                    condition.update(status="False", lastTransitionTime=timestamp(now))
            for container in status.get("containerStatuses") or []:
                container["ready"] = False
            return current

        try:
            return self._store.modify(pods_type, pod["metadata"]["namespace"], pod["metadata"]["name"], change)
        except errors.ApiError:
            return pod

    def _ip(self) -> str:
        self._next_ip += 1
        return f"10.244.{(self._next_ip // 250) % 250}.{self._next_ip % 250 + 2}"

    def _advance(self, pods_type: ResourceType, pod: JSON, now: datetime) -> JSON:
        uid = pod["metadata"]["uid"]
        if pod["metadata"].get("deletionTimestamp") or _is_ready(pod):
            return pod  # terminating, or ready: nothing more happens to it with time
        if self._written.get(uid) != pod.get("status"):
            return pod  # not born here, or its status was written through the API since: hands off
        ip = (pod.get("status") or {}).get("podIP") or self._ip()
        status = pod_status(pod, now, ip)
        if status == pod.get("status"):
            return pod
        self._written[uid] = status

        def change(current: JSON) -> JSON:
            current["status"] = status  # the kubelet writes the status only, whatever else changed meanwhile
            return current

        try:
            return self._store.modify(pods_type, pod["metadata"]["namespace"], pod["metadata"]["name"], change)
        except errors.ApiError:
            return pod

    def _delete_pod(self, pods_type: ResourceType, pod: JSON) -> None:
        with contextlib.suppress(errors.ApiError):  # already gone
            self._store.delete(pods_type, pod["metadata"]["namespace"], pod["metadata"]["name"])

    def _write_status(
        self,
        rtype: ResourceType,
        workload: JSON,
        pods: list[JSON],
        now: datetime,
        *,
        updated: int | None = None,
        replica_set: str = "",
    ) -> None:
        spec = workload.get("spec") or {}
        status = workload_status(
            rtype.plural,
            old=workload.get("status") or {},
            desired=int(spec.get("replicas", 1)),
            replicas=len(pods),
            updated=len(pods) if updated is None else updated,
            ready=sum(1 for p in pods if _is_ready(p)),
            generation=int(workload["metadata"].get("generation", 1)),
            name=replica_set or workload["metadata"]["name"],
            now=now,
        )
        if status == workload.get("status"):
            return

        def change(current: JSON) -> JSON:
            current["status"] = status
            return current

        with contextlib.suppress(errors.ApiError):  # deleted meanwhile
            self._store.modify(rtype, workload["metadata"]["namespace"], workload["metadata"]["name"], change)
