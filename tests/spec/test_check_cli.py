"""`autoscaler check` as a user runs it: a real process, one line per problem, exit 0, 1 or 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p) for p in (ROOT / "config" / "samples").glob("*.yaml"))

AUTOSCALER = """\
apiVersion: autoscaler.dev/v1alpha1
kind: PrometheusAutoscaler
metadata: {name: worker, namespace: jobs}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: MIN
  maxReplicas: 10
  metrics:
    - type: External
      external:
        metric: {name: queue_depth}
        target: {type: AverageValue, averageValue: "30"}
"""
HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
"""


def _check(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", "check", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _write(tmp_path: Path, text: str, name: str = "spec.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_samples_are_valid() -> None:
    proc = _check(*SAMPLES)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"{len(SAMPLES)} of {len(SAMPLES)} autoscaler(s) valid\n"


def test_each_problem_is_one_line_naming_file_document_and_field(tmp_path: Path) -> None:
    bad = AUTOSCALER.replace("MIN", "12").replace('averageValue: "30"', 'averageValue: "0"')
    path = _write(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" + bad)
    proc = _check(path)
    assert proc.returncode == 1
    where = f"{path}: document 2 (PrometheusAutoscaler jobs/worker)"
    assert proc.stdout.splitlines() == [
        f"{where}: spec.maxReplicas: must be greater than or equal to `minReplicas` (10 < 12)",
        f"{where}: spec.metrics[0].external.target.averageValue: must be positive, not '0'",
        "0 of 1 autoscaler(s) valid",
    ]


def test_stdin_and_a_plain_hpa_manifest() -> None:
    proc = _check("-", stdin=HPA + "---\n" + AUTOSCALER.replace("MIN", "1"))
    assert (proc.returncode, proc.stdout) == (0, "2 of 2 autoscaler(s) valid\n")


def test_a_plain_hpa_has_no_prometheus_binding_and_must_be_v2(tmp_path: Path) -> None:
    with_binding = HPA + "      prometheus: {query: 'sum(up)'}\n"
    proc = _check(_write(tmp_path, with_binding))
    assert (
        "spec.metrics[0].prometheus: unknown field: a HorizontalPodAutoscaler has no Prometheus binding" in proc.stdout
    )
    proc = _check(_write(tmp_path, HPA.replace("autoscaling/v2", "autoscaling/v1")))
    assert "apiVersion: HorizontalPodAutoscaler is read as autoscaling/v2, not autoscaling/v1" in proc.stdout
    assert proc.returncode == 1


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param([], 1, "spec.minReplicas: note: 0 is kept on an object that already has it", id="as stored"),
        pytest.param(["--new"], 1, "spec.minReplicas: must be greater than or equal to 1", id="as new"),
        pytest.param(["--new", "--feature-gates", "HPAScaleToZero=true"], 0, "1 of 1", id="as new with the gate"),
        pytest.param(["--feature-gates", "HPAScaleToZero=true"], 0, "1 of 1", id="as stored with the gate"),
    ],
)
def test_minreplicas_zero_and_the_gate(tmp_path: Path, args: list[str], code: int, words: str) -> None:
    proc = _check(*args, _write(tmp_path, AUTOSCALER.replace("MIN", "0")))
    assert words in proc.stdout
    # As stored, minReplicas 0 is valid: the note does not fail the check.
    assert proc.returncode == (0 if "note" in words else code)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--feature-gates", "HPAScaleToZero=yes", "x.yaml"], "want true or false", id="a bad value"),
        pytest.param(["--feature-gates", "ScaleToZero=true", "x.yaml"], "unknown feature gate 'ScaleToZero'",
                     id="an unknown gate"),
        pytest.param([], "the following arguments are required: FILE", id="no file"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2(args: list[str], words: str) -> None:
    proc = _check(*args)
    assert proc.returncode == 2
    assert words in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        pytest.param(b"spec: [\n",
                     "not valid YAML: expected the node content, but found '<stream end>' at line 2 column 1",
                     id="broken YAML"),
        pytest.param(AUTOSCALER.replace("MIN", "1").replace("maxReplicas: 10", "maxReplicas: 10\n  maxReplicas: 3")
                     .encode(), "found duplicate key 'maxReplicas' at line 8 column 3", id="a duplicate key"),
        pytest.param(b"kind: Deployment\nmetadata: {name: caf\xe9}\n", "not valid UTF-8: byte 0xe9 at byte offset 37",
                     id="invalid UTF-8"),
        pytest.param(b"apiVersion: apps/v1\nkind: Deployment\n",
                     "holds no PrometheusAutoscaler or HorizontalPodAutoscaler",
                     id="no autoscaler"),
        pytest.param(b"- a\n- b\n", "document 1: not a Kubernetes object (no kind)", id="a list"),
        pytest.param(b"- a\n- b\n", "0 of 0 autoscaler(s) valid; 1 other document(s) not valid", id="a list, counted"),
        pytest.param(AUTOSCALER.replace("MIN", "9" * 5000).encode(), "a number has more than 4300 digits",
                     id="a number of 5000 digits"),
        pytest.param(b"[" * 5000 + b"]" * 5000, "nested too deeply", id="deep nesting"),
    ],
)  # fmt: skip
def test_unreadable_files_get_their_own_message(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    proc = _check(str(path))
    assert proc.returncode == 1
    assert words in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    proc = _check(str(tmp_path / "absent.yaml"), *SAMPLES)
    assert proc.returncode == 1
    assert f"{tmp_path / 'absent.yaml'}: cannot read: No such file or directory" in proc.stdout


def test_documents_that_are_not_objects_are_not_counted_as_autoscalers(tmp_path: Path) -> None:
    text = "- a\n---\n" + HPA + "---\n42\n---\n" + AUTOSCALER.replace("MIN", "1") + "---\nplain text\n"
    proc = _check(_write(tmp_path, text))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "2 of 2 autoscaler(s) valid; 3 other document(s) not valid"


def _laughs(indent: str) -> str:
    """A "billion laughs": nine levels of nine aliases, 9**9 (387 million) strings once expanded."""
    return f"{indent}a0: &a0 [{', '.join(['lol'] * 9)}]\n" + "".join(
        f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
    )


WORKER = "metadata: {name: worker, namespace: jobs}"
LAUGHS = AUTOSCALER.replace(WORKER, f"metadata:\n  name: worker\n  namespace: jobs\n  annotations:\n{_laughs('    ')}")
LAUGHS_CONFIGMAP = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: lol}}\ndata:\n{_laughs('  ')}"
RECURSIVE = AUTOSCALER.replace(WORKER, "metadata:\n  name: worker\n  namespace: jobs\n  annotations: &a {x: *a}")
EXCESSIVE = "not valid YAML: its aliases expand it by more than 1,000,000 nodes; Kubernetes refuses excessive aliasing"


@pytest.mark.parametrize(
    ("bomb", "words", "summary"),
    [
        pytest.param(
            RECURSIVE,
            "document 1 (PrometheusAutoscaler jobs/worker): not valid YAML: the anchor &a at line 6 column 16 "
            "contains an alias to itself (*a); Kubernetes refuses a recursive alias",
            "1 of 2 autoscaler(s) valid",
            id="a recursive alias",
        ),
        pytest.param(
            LAUGHS,
            f'document 1 (PrometheusAutoscaler jobs/worker): {EXCESSIVE} (a "billion laughs" document)',
            "1 of 2 autoscaler(s) valid",
            id="a billion laughs",
        ),
        pytest.param(
            LAUGHS_CONFIGMAP,
            f'document 1 (ConfigMap lol): {EXCESSIVE} (a "billion laughs" document)',
            "1 of 1 autoscaler(s) valid; 1 other document(s) not valid",
            id="a billion laughs in a document of another kind",
        ),
    ],
)
def test_alias_bombs_are_refused_at_once_and_the_next_document_is_still_read(
    tmp_path: Path, bomb: str, words: str, summary: str
) -> None:
    """Before, `check` spent minutes (a billion laughs) or forever (a recursive alias) on these few bytes."""
    assert len(_laughs("")) < 600
    proc = _check(_write(tmp_path, bomb + "---\n" + HPA), timeout=20)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines() == [f"{tmp_path / 'spec.yaml'}: {words}", summary]


def test_an_output_that_cannot_be_written_is_one_line_and_exit_74() -> None:
    """`autoscaler check ... >/dev/full`: a full disk is reported as such (EX_IOERR), not as a traceback."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "autoscaler", "check", *SAMPLES],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert (proc.returncode, proc.stderr) == (
        74,
        "autoscaler check: cannot write the output: No space left on device\n",
    )
