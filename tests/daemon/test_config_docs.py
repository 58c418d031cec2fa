"""docs/configuration.md names every field of the settings (walked from the model), and its example loads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

import yaml
from pydantic import BaseModel

from autoscaler.daemon.config import DaemonConfig, config_from_data

DOC = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()


def _model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)), None)


def field_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every field's camelCase path; a map's entries are `<name>`."""
    paths = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        paths.append(path)
        annotation = field.annotation
        if get_origin(annotation) is dict:
            inner = _model(get_args(annotation)[1])
            if inner is not None:
                paths += field_paths(inner, f"{path}.<name>.")
            continue
        inner = _model(annotation)
        if inner is not None:
            paths += field_paths(inner, f"{path}.")
    return paths


def test_the_walk_finds_nested_fields() -> None:
    paths = field_paths(DaemonConfig)
    assert "metrics.servers.<name>.tls.caFile" in paths and "leaderElection.leaseDurationSeconds" in paths
    assert len(paths) > 60


def test_every_setting_has_its_line_in_the_doc() -> None:
    rows = set(re.findall(r"^\| `([^`]+)` \|", DOC, flags=re.M))
    paths = field_paths(DaemonConfig)
    # A section (`leaderElection`, `metrics.resourceTemplates.cpu`) is a heading, not a row; a map is a row.
    sections = {path for path in paths if any(p.startswith(path + ".") and p[len(path) + 1] != "<" for p in paths)}
    missing = [path for path in paths if path not in rows and path not in sections]
    assert missing == []
    assert sorted(rows - set(paths)) == []


def test_every_field_is_described_in_the_model() -> None:
    def undescribed(model: type[BaseModel]) -> list[str]:
        missing = [f"{model.__name__}.{n}" for n, f in model.model_fields.items() if not f.description]
        for field in model.model_fields.values():
            inner = _model(field.annotation) or (
                _model(get_args(field.annotation)[1]) if get_origin(field.annotation) is dict else None
            )
            if inner is not None:
                missing += undescribed(inner)
        return missing

    assert undescribed(DaemonConfig) == []


def test_the_example_loads() -> None:
    [example] = [b for b in re.findall(r"```yaml\n(.*?)```", DOC, flags=re.S) if "metrics:" in b]
    config = config_from_data(yaml.safe_load(example), source="example", env={}, base=Path())
    assert config.namespaces == ["shop", "payments"]


def test_the_environment_examples_load() -> None:
    [block] = re.findall(r"```sh\n(.*?)```", DOC, flags=re.S)
    env = dict(line.split("=", 1) for line in block.splitlines())
    env = {name: value.strip("'") for name, value in env.items()}
    config = config_from_data({}, source="example", env=env, base=Path())
    assert config.dry_run is True and config.controller.gates()["HPAScaleToZero"] is True
