"""Malformed snapshots never produce a traceback: every failure of `autoscaler replay` has its own message.

The example snapshots are mutated (wrong types, missing fields, huge numbers, deep nesting, bad Unicode,
truncated or corrupted bytes) and replayed in-process through `replay_file`, which lets no exception through
but a bug: the last-resort handler (`INTERNAL_ERROR`) sits above it, in `run`, so reaching it fails here.
A batch of mutated files also goes through the real command.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.replay import INTERNAL_ERROR, _text, replay_file

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "docs" / "snapshots").glob("*.json"))
BASES = [json.loads(path.read_text()) for path in EXAMPLES]

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**31, -(2**31) - 1, 2**63, 10**30, -(10**40), 0.5, 1e308, -0.0,
    float("nan"), float("inf"), "", "2", "true", "-1", "1e30", "9223372036854775808", "0.1m", "x" * 300,
    "\ud800", "caf\u00e9 \u2603", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+01:00", "1969-12-31T23:59:59Z",
    "2026-11-21T12:00:00Z", "30s", "-30s", "Value", "Utilization", "Object", [], {}, [[[[]]]], {"a": {"b": {}}},
]  # fmt: skip

leaf = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec=None), max_size=20),
)
odd = st.recursive(
    leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


NEST = "deeply nested here"  # replaced in the JSON text by 5000 nested arrays


def _paths(data: Any) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        found.append(path)
        if isinstance(node, dict):
            stack += [((*path, key), value) for key, value in node.items()]
        elif isinstance(node, list):
            stack += [((*path, i), value) for i, value in enumerate(node)]
    return sorted(found, key=repr)


def _mutate(data: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return value if action == "replace" else data
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "replace":
        parent[last] = value
    elif action == "delete":
        del parent[last]
    elif action == "nest":
        parent[last] = NEST
    elif action == "wrap":
        parent[last] = {"value": parent[last]}
    return data


@st.composite
def malformed_snapshot(draw: st.DrawFn) -> bytes:
    data = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "nest", "wrap"]))
        data = _mutate(data, path, action, copy.deepcopy(draw(odd)) if action == "replace" else None)
    text = json.dumps(data, allow_nan=True).replace(json.dumps(NEST), "[" * 5000 + "]" * 5000)
    text = text.encode("utf-8", "surrogatepass")
    corruption = draw(st.sampled_from(["none", "none", "truncate", "insert", "bom"]))
    at = draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))
    if corruption == "truncate":
        text = text[:at]
    elif corruption == "insert":
        text = text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at:]
    elif corruption == "bom":
        text = b"\xef\xbb\xbf" + text
    return text


def _check(result: dict[str, Any]) -> None:
    """A decision, or an error made only of specific messages; either printable as JSON and as text."""
    if "formatVersion" in result:
        assert result["snapshot"]
    else:
        error = result["error"]
        assert INTERNAL_ERROR not in error["message"] and not error.get("internal")
        assert error["problems"], error
        for problem in error["problems"]:
            assert problem["message"] and problem["message"].strip() == problem["message"]
    json.dumps(result, allow_nan=False)
    _text(result).encode("utf-8")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(malformed_snapshot())
def test_every_failure_has_its_own_message(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "snapshot.json"
        path.write_bytes(content)
        _check(replay_file(str(path)))


def test_mutated_snapshots_through_the_real_command(tmp_path: Path) -> None:
    """One process, many malformed files: exit 1, no traceback, one message per bad file."""
    rng = random.Random(20261121)
    paths = []
    for i in range(60):
        data = json.loads(json.dumps(rng.choice(BASES)))
        path = rng.choice(_paths(data)[1:])
        data = _mutate(data, path, rng.choice(["replace", "delete", "wrap"]), copy.deepcopy(rng.choice(ODD_VALUES)))
        file = tmp_path / f"mutated-{i}.json"
        file.write_bytes(json.dumps(data, allow_nan=True).encode("utf-8", "surrogatepass"))
        paths.append(str(file))
    proc = subprocess.run(
        [sys.executable, "-m", "autoscaler", "replay", "-o", "text", *paths],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr and INTERNAL_ERROR not in proc.stderr
    assert len(proc.stderr.splitlines()) >= 1
