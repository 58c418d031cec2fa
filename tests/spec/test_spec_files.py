"""The spec-file loader: documents, kinds, identity, and no exception for any bytes a file can hold."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.spec.files import load_spec_file, load_spec_text
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
