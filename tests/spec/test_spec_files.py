"""The spec-file loader: documents, kinds, identity, and no exception for any bytes a file can hold."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.spec.files import AliasError, check_aliases, load_spec_file, load_spec_text
from autoscaler.spec.objects import load_autoscaler

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "config" / "samples").glob("*.yaml"))
SAMPLE_BYTES = [path.read_bytes() for path in SAMPLES]


def test_documents_are_numbered_from_one_and_other_kinds_are_skipped() -> None:
    loaded = load_spec_file(str(ROOT / "config" / "samples" / "web.yaml"), scale_to_zero=False)
    assert loaded.valid and loaded.skipped == 1
    (document,) = loaded.documents
    assert (document.index, document.label) == (2, "PrometheusAutoscaler default/web")
    autoscaler = loaded.autoscalers[0]
    assert (autoscaler.kind, autoscaler.namespace, autoscaler.name) == ("PrometheusAutoscaler", "default", "web")
    assert (autoscaler.spec.min_replicas, autoscaler.spec.max_replicas, len(autoscaler.spec.metrics)) == (2, 20, 2)


def test_the_object_needs_a_valid_name_and_no_unknown_top_level_field() -> None:
    (doc,) = [d for d in yaml.safe_load_all(SAMPLE_BYTES[0]) if d["kind"] == "PrometheusAutoscaler"]
    doc["metadata"]["name"] = "Web_1"
    doc["sepc"] = {}
    loaded = load_spec_text(yaml.safe_dump(doc), source="x.yaml", scale_to_zero=False)
    (document,) = loaded.documents
    problems = dict(document.problems)
    assert set(problems) == {"sepc", "metadata.name"}
    assert "not a DNS-1123 subdomain" in problems["metadata.name"]


def test_the_crd_objects_and_the_files_share_one_reader() -> None:
    """What the daemon reads from the cluster goes through `load_autoscaler`, as each file document does."""
    (doc,) = [d for d in yaml.safe_load_all(SAMPLE_BYTES[0]) if d["kind"] == "PrometheusAutoscaler"]
    from_cluster = load_autoscaler(doc, scale_to_zero=False)
    (from_file,) = load_spec_file(str(SAMPLES[0]), scale_to_zero=False).autoscalers
    assert from_cluster == from_file


@st.composite
def corrupted_sample(draw: st.DrawFn) -> bytes:
    data = draw(st.sampled_from(SAMPLE_BYTES))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        action = draw(st.sampled_from(["truncate", "insert", "delete", "replace"]))
        noise = draw(
            st.one_of(
                st.binary(min_size=1, max_size=6),
                st.sampled_from([b"- ", b": ", b"{", b"]", b"&a ", b"*a", b"!!binary ", b"\t", b"'", b"99999999999"]),
            )
        )
        if action == "truncate":
            data = data[:at]
        elif action == "insert":
            data = data[:at] + noise + data[at:]
        elif action == "delete":
            data = data[:at] + data[at + len(noise) :]
        else:
            data = data[:at] + noise + data[at + len(noise) :]
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted_sample())
def test_any_bytes_give_messages_not_exceptions(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "spec.yaml"
        path.write_bytes(content)
        loaded = load_spec_file(str(path), scale_to_zero=False)
    for field, message in loaded.problems + [p for d in loaded.documents for p in d.problems]:
        assert message.strip(), field
        f"{field}: {message}".encode()


ANCHORED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: &labels {app: web}}
spec:
  selector: {matchLabels: *labels}
  template: {metadata: {labels: *labels}}
---
apiVersion: autoscaler.dev/v1alpha1
kind: PrometheusAutoscaler
metadata: {name: web, labels: &labels {app: web}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  metrics:
    - &cpu {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}
  behavior:
    scaleUp: &rules {policies: [{type: Pods, value: 2, periodSeconds: 60}]}
    scaleDown: {<<: *rules, selectPolicy: Min}
"""


def test_anchors_and_aliases_of_a_real_manifest_still_load() -> None:
    loaded = load_spec_text(ANCHORED, source="x.yaml", scale_to_zero=False)
    assert loaded.valid and loaded.skipped == 1
    (autoscaler,) = loaded.autoscalers
    assert autoscaler.spec.behavior is not None
    assert autoscaler.spec.behavior.scale_down.policies == autoscaler.spec.behavior.scale_up.policies


@pytest.mark.parametrize(
    ("text", "limit", "refused"),
    [
        # 7 distinct nodes; expanded, b's list holds a's twice: 13 nodes, 6 added by the aliases.
        pytest.param("a: &a [x, y]\nb: [*a, *a]\n", 6, False, id="aliases adding as many nodes as the limit"),
        pytest.param("a: &a [x, y]\nb: [*a, *a]\n", 5, True, id="aliases adding one node more than the limit"),
        pytest.param("a: &a {x: 1}\nb: {<<: [*a, *a, *a]}\n", 4, True, id="merge keys count as their aliases do"),
        pytest.param("a: [x, y]\nb: [x, y]\n", 0, False, id="no alias: never refused for its size"),
    ],
)
def test_alias_expansion_is_counted_node_by_node(text: str, limit: int, refused: bool) -> None:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if refused:
        with pytest.raises(AliasError, match="its aliases expand it by more than"):
            check_aliases(node, anchors={}, limit=limit)
    else:
        check_aliases(node, anchors={}, limit=limit)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("&a [*a]\n", "the anchor &a at line 1 column 1 contains an alias to itself (*a)", id="a list"),
        pytest.param("a: &b\n  c: [1, {d: *b}]\n", "the anchor &b at line 1 column 4", id="deeper down"),
    ],
)
def test_a_recursive_alias_is_refused_with_its_anchor(text: str, words: str) -> None:
    loaded = load_spec_text(text, source="x.yaml", scale_to_zero=False)
    (document,) = loaded.documents
    assert document.index == 1 and not document.is_autoscaler
    assert words in document.problems[0][1]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("syncPeriodSeconds", 30, id="syncPeriodSeconds"),
        pytest.param("dryRun", True, id="dryRun"),
        pytest.param("dryRun", False, id="dryRun false is still a field an HPA lacks"),
    ],
)
def test_the_daemon_fields_belong_to_the_custom_resource_not_to_an_hpa(field: str, value: object) -> None:
    (doc,) = [d for d in yaml.safe_load_all(SAMPLE_BYTES[0]) if d["kind"] == "PrometheusAutoscaler"]
    doc["spec"][field] = value
    autoscaler = load_autoscaler(doc, scale_to_zero=False)
    assert (autoscaler.model.sync_period_seconds, autoscaler.model.dry_run) == (
        value if field == "syncPeriodSeconds" else None,
        value if field == "dryRun" else False,
    )
    hpa = {**doc, "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}
    hpa["spec"] = {
        **doc["spec"],
        "metrics": [{k: v for k, v in m.items() if k != "prometheus"} for m in doc["spec"]["metrics"]],
    }
    loaded = load_spec_text(yaml.safe_dump(hpa), source="x.yaml", scale_to_zero=False)
    (document,) = loaded.documents
    assert document.problems == [
        (f"spec.{field}", f"unknown field: a HorizontalPodAutoscaler has no {field} (a PrometheusAutoscaler has)")
    ]


def test_without_the_daemon_fields_the_defaults_apply() -> None:
    (autoscaler,) = load_spec_file(str(SAMPLES[0]), scale_to_zero=False).autoscalers
    assert (autoscaler.model.sync_period_seconds, autoscaler.model.dry_run) == (None, False)
