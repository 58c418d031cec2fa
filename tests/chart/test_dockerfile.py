"""The Dockerfile, checked without an engine: hadolint at warning level, and the image's properties read from
the instructions (two stages, a pinned base, no build tools in the final stage, a numeric non-root user,
nothing written at run time, an exec-form entrypoint running `autoscaler run`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.chart.chart import ROOT, one, render

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|cc|clang|make|build-essential|python3?-dev|libc6?-dev|apt-get|apk|pip)\b")


@dataclass
class Stage:
    image: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for key, args in self.instructions if key == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"stage {self.name or self.image} has no {keyword}"
        return found[-1]


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction: comments dropped, continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, args = whole.partition(" ")
        out.append((keyword.upper(), args.strip()))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return out


def stages(text: str) -> list[Stage]:
    args: dict[str, str] = {}
    out: list[Stage] = []
    for keyword, rest in instructions(text):
        if keyword == "ARG" and not out:
            name, _, default = rest.partition("=")
            args[name] = default
        elif keyword == "FROM":
            parts = rest.split()
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m.group(1) or m.group(2)], parts[0])
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else ""
            out.append(Stage(image, name))
        else:
            assert out, f"{keyword} before the first FROM"
            out[-1].instructions.append((keyword, rest))
    return out


STAGES = stages(DOCKERFILE.read_text())
FINAL = STAGES[-1]


def test_hadolint_finds_nothing_at_warning_level() -> None:
    result = subprocess.run(
        [hadolint(), "--failure-threshold", "warning", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("dockerfile", "rule"),
    [
        pytest.param("FROM python\nRUN echo\n", "DL3006", id="an untagged base"),
        pytest.param("FROM python:latest\nRUN echo\n", "DL3007", id="latest"),
        pytest.param("FROM python:3.11-slim\nENTRYPOINT autoscaler run\n", "DL3025", id="a shell-form entrypoint"),
    ],
)
def test_hadolint_runs_at_warning_level(dockerfile: str, rule: str, tmp_path: Path) -> None:
    """The hadolint above is really run: it fails a Dockerfile with a warning."""
    path = tmp_path / "Dockerfile"
    path.write_text(dockerfile)
    result = subprocess.run(
        [hadolint(), "--failure-threshold", "warning", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and rule in result.stdout, result.stdout


def hadolint() -> str:
    binary = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if binary is None:
        pytest.fail("no hadolint: install the test extra (pip install -e '.[test]')", pytrace=False)
    return binary


def test_two_stages_from_a_base_pinned_by_tag() -> None:
    assert len(STAGES) >= 2
    for stage in STAGES:
        tag = stage.image.partition(":")[2]
        assert tag and tag != "latest", stage.image
        assert re.fullmatch(r"\d+\.\d+\.\d+-slim-\w+", tag), f"{stage.image}: not a full version tag"
    assert FINAL.image == STAGES[0].image, "the venv's interpreter path must exist in the final stage"


def test_the_final_stage_only_copies_the_virtualenv_in() -> None:
    assert FINAL.all("RUN") == [], "the final stage installs nothing: no compiler, no build tools, no pip run"
    copies = FINAL.all("COPY") + FINAL.all("ADD")
    assert copies == [f"--from={STAGES[0].name} /opt/autoscaler /opt/autoscaler"]
    for keyword, args in FINAL.instructions:
        assert not BUILD_TOOLS.search(args), f"{keyword} {args}"


def test_a_numeric_non_root_user() -> None:
    user, _, group = FINAL.last("USER").partition(":")
    assert user.isdigit() and int(user) > 0
    assert group.isdigit()
    deployment = one(render({}), "Deployment")
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)


def test_nothing_is_written_at_run_time() -> None:
    env = " ".join(FINAL.all("ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert "HOME=/tmp" in env  # the only writable path with a read-only root filesystem
    assert FINAL.last("WORKDIR") == "/tmp"
    builder = " ".join(STAGES[0].all("ENV"))
    assert "PIP_NO_CACHE_DIR=1" in builder


def test_an_exec_form_entrypoint_running_autoscaler_run_with_the_charts_settings_path() -> None:
    entrypoint = json.loads(FINAL.last("ENTRYPOINT"))
    assert entrypoint == ["/opt/autoscaler/bin/autoscaler", "run"]
    command = json.loads(FINAL.last("CMD"))
    container = one(render({}), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert command == container["args"] == ["--config", "/etc/autoscaler/daemon.yaml"]
    assert FINAL.last("EXPOSE") == str(container["ports"][0]["containerPort"])


def test_the_build_context_is_only_what_the_wheel_needs() -> None:
    lines = [line for line in DOCKERIGNORE.read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*", "an allow-list: everything is excluded first"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    sources = set()
    for args in STAGES[0].all("COPY"):
        sources |= set(args.split()[:-1])
    assert sources == allowed == {"pyproject.toml", "README.md", "autoscaler"}
    for name in allowed:
        assert (ROOT / name).exists(), name


def test_the_builders_wheel_holds_the_package_and_its_data(tmp_path: Path) -> None:
    """The builder's `pip wheel --no-deps .` on the build context alone: the package, its CRD, the command."""
    context = tmp_path / "context"
    context.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, context / name)
    shutil.copytree(ROOT / "autoscaler", context / "autoscaler", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path), "."],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (wheel,) = tmp_path.glob("autoscaler-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert {"autoscaler/cli.py", "autoscaler/kube/crd.yaml", "autoscaler/py.typed"} <= names
    assert not any(n.startswith(("tests/", "bench/", "charts/")) for n in names)
    assert "autoscaler = autoscaler.cli:main" in entry_points
