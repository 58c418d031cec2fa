"""`autoscaler replay` as a user runs it: a real process, its output, its exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
