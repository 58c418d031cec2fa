"""`autoscaler replay` as a user runs it: a real process, its output, its exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "snapshots"


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoscaler", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_replay_prints_one_json_decision() -> None:
    proc = _run("replay", str(EXAMPLES / "resource-cpu-utilization.json"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["desiredReplicas"], out["rescale"]) == (5, True)
    assert proc.stderr == ""


def test_replay_of_several_snapshots_prints_an_array_in_order() -> None:
    names = ["pods-requests-per-second.json", "external-queue-depth.json"]
    proc = _run("replay", *(str(EXAMPLES / n) for n in names))
    assert proc.returncode == 0, proc.stderr
    assert [d["snapshot"].rsplit("/", 1)[-1] for d in json.loads(proc.stdout)] == names


def test_jsonl_and_text_outputs() -> None:
    paths = sorted(str(p) for p in EXAMPLES.glob("*.json"))
    lines = _run("replay", "-o", "jsonl", *paths).stdout.splitlines()
    assert len(lines) == len(paths) and all(json.loads(line)["formatVersion"] for line in lines)
    text = _run("replay", "-o", "text", str(EXAMPLES / "resource-cpu-utilization.json")).stdout
    assert "scale 3 -> 5" in text and "ceil(1.5 * 3 ready pods) = 5" in text


def test_replay_reads_stdin() -> None:
    proc = _run("replay", "-", stdin=(EXAMPLES / "object-ingress-requests.json").read_text())
    assert proc.returncode == 0 and json.loads(proc.stdout)["desiredReplicas"] == 4


def test_a_malformed_snapshot_names_the_field_and_the_rest_still_replay(tmp_path: Path) -> None:
    bad = json.loads((EXAMPLES / "resource-cpu-utilization.json").read_text())
    bad["autoscaler"]["spec"]["maxReplicas"] = "ten"
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    proc = _run("replay", str(bad_path), str(EXAMPLES / "resource-cpu-utilization.json"))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "autoscaler.spec.maxReplicas" in proc.stderr
    first, second = json.loads(proc.stdout)
    assert first["error"]["problems"][0]["field"] == "autoscaler.spec.maxReplicas"
    assert second["desiredReplicas"] == 5


def test_missing_file_and_bad_json_are_errors_not_tracebacks(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    proc = _run("replay", str(broken), str(tmp_path / "absent.json"))
    assert proc.returncode == 1
    assert "not valid JSON" in proc.stderr and "No such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_explains_the_format() -> None:
    proc = _run("replay", "--help")
    assert proc.returncode == 0
    for words in ("behaviorState", "docs/snapshot.md", "desiredReplicas", "Exit status"):
        assert words in proc.stdout


def test_emulator_command_passes_its_options_through() -> None:
    proc = _run("emulator", "--help")
    assert proc.returncode == 0
    assert "--port" in proc.stdout and "--seed" in proc.stdout
    assert proc.stdout.startswith("usage: autoscaler emulator "), "named as the user typed it"


def test_invalid_utf8_names_the_file_and_the_byte(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"comment": "caf\xe9", "now": "2026-11-21T12:00:00Z"}')
    proc = _run("replay", str(bad))
    assert proc.returncode == 1
    assert f"{bad}: not valid UTF-8: byte 0xe9 at byte offset 16" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_closed_output_pipe_ends_quietly() -> None:
    """`autoscaler replay ... | head -1`: exit 141 as a Unix tool killed by SIGPIPE, and nothing on stderr."""
    paths = [str(EXAMPLES / "resource-cpu-utilization.json")] * 200  # far more than a pipe buffer holds
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoscaler", "replay", "-o", "jsonl", *paths],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert json.loads(first)["desiredReplicas"] == 5
    assert stderr == ""


@pytest.mark.parametrize(
    ("content", "words"),
    [
        pytest.param(b"{", "not valid JSON: Expecting property name", id="truncated JSON"),
        pytest.param(b'{"now": NaN}', "NaN is not a JSON value (JSON has no NaN or Infinity) at line 1 column 9",
                     id="NaN"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000,
                     "not valid JSON: nested deeper than 512 levels at line 1 column 513", id="deep nesting"),
        pytest.param(b'{\n "now": ' + b"9" * 5000 + b"}", "a number has more than 4300 digits at line 2 column 9",
                     id="a number of 5000 digits"),
        pytest.param(b'{"comment": "\\ud800"}', "comment: holds a lone UTF-16 surrogate", id="a lone surrogate"),
        pytest.param(b"\xef\xbb\xbf{}", "now: required field is missing", id="a byte order mark, then {}"),
        pytest.param(b"", "not valid JSON: Expecting value at line 1 column 1", id="an empty file"),
        pytest.param(b'"a snapshot"', "a snapshot is a JSON object, not str", id="a string"),
        pytest.param(b'{"now": "2026-11-21T12:00:00Z", "now": "2026-11-21T12:00:01Z"}',
                     "the key 'now' appears twice in one object, the second time at line 1 column 33",
                     id="a duplicate key"),
    ],
)  # fmt: skip
def test_malformed_files_get_their_own_message(tmp_path: Path, content: bytes, words: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    proc = _run("replay", str(bad))
    assert proc.returncode == 1, proc.stderr
    assert words in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_huge_numbers_are_refused_with_their_field(tmp_path: Path) -> None:
    snap = json.loads((EXAMPLES / "resource-cpu-utilization.json").read_text())
    snap["scale"]["spec"]["replicas"] = 10**30
    snap["pods"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = str(2**63)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(snap))
    proc = _run("replay", "-o", "text", str(path))
    assert proc.returncode == 1
    assert "scale.spec.replicas: Input should be less than or equal to 2147483647" in proc.stderr
    assert "pods[0].spec.containers[0].resources.requests.cpu" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bug_is_reported_as_one_not_as_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last-resort handler: a snapshot that trips a bug names the bug, and the others still replay."""
    import io

    from autoscaler import replay

    real = replay.replay_file

    def buggy(path: str) -> dict[str, object]:
        if path == "bug.json":
            raise ZeroDivisionError("division by zero")
        return real(path)

    monkeypatch.setattr(replay, "replay_file", buggy)
    out, err = io.StringIO(), io.StringIO()
    status = replay.run(["bug.json", str(EXAMPLES / "resource-cpu-utilization.json")], output="jsonl", out=out, err=err)
    assert status == replay.EXIT_INTERNAL_ERROR == 70
    assert err.getvalue() == (
        f"autoscaler replay: bug.json: {replay.INTERNAL_ERROR}: ZeroDivisionError: division by zero\n"
    )
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["error"]["internal"] is True and second["desiredReplicas"] == 5


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([*sorted(str(p) for p in EXAMPLES.glob("*.json"))], id="an output past a buffer"),
        pytest.param(
            ["-o", "text", str(EXAMPLES / "resource-cpu-utilization.json")], id="an output flushed at the end"
        ),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line_and_exit_74(args: list[str]) -> None:
    """`autoscaler replay ... >/dev/full`: a full disk is reported as such (EX_IOERR), not as a traceback."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "autoscaler", "replay", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert "Traceback" not in proc.stderr
    assert (proc.returncode, proc.stderr) == (
        74,
        "autoscaler replay: cannot write the output: No space left on device\n",
    )
