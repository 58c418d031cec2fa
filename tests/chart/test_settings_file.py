"""config/daemon.yaml documents the settings line by line: every field of the schema is on a line of its own
(set to its default, or commented out where it has none), and every such line says what it does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from autoscaler.daemon.config import DaemonConfig, load_config
from tests.chart.chart import ROOT
from tests.daemon.test_config_docs import field_paths

SETTINGS = ROOT / "config" / "daemon.yaml"
MAPS = {"metrics.servers", "metrics.templates"}  # maps of named entries: `<name>` in field_paths
MOVED = {"controller.configurableTolerance"}  # refused with a message saying where it moved
# A field commented out: "# name: value", indented where it belongs (after the "#", for nested fields).
COMMENTED_FIELD = re.compile(r"^(\s*)# ( *)([a-z][A-Za-z]*:(\s.*)?)$")


def uncommented(text: str) -> str:
    return "\n".join(COMMENTED_FIELD.sub(r"\1\2\3", line) for line in text.splitlines())


def key_paths(node: Any, prefix: str = "") -> list[str]:
    """Every key's dotted path; the entries of a map of named entries are `<name>`, as in field_paths."""
    paths = []
    for key, value in node.items():
        path = f"{prefix}{key}"
        paths.append(path)
        if path in MAPS:
            for entry in value.values():
                paths += key_paths(entry, f"{path}.<name>.")
        elif isinstance(value, dict):
            paths += key_paths(value, f"{path}.")
    return paths


def test_every_field_has_its_line() -> None:
    document = yaml.safe_load(uncommented(SETTINGS.read_text()))
    shown = set(key_paths(document))
    fields = set(field_paths(DaemonConfig)) - MOVED
    assert sorted(fields - shown) == [], "add these settings to config/daemon.yaml, each with its comment"
    assert sorted(shown - fields) == [], "config/daemon.yaml shows settings the schema does not have"


def test_every_setting_line_says_what_it_does() -> None:
    silent = []
    for number, line in enumerate(uncommented(SETTINGS.read_text()).splitlines(), start=1):
        if re.match(r"^\s*[A-Za-z][\w-]*:", line) and not re.search(r"\s#\s\S", line):
            silent.append(f"{number}: {line.strip()}")
    assert silent == []


def test_the_file_loads_and_its_values_are_the_defaults_unless_it_says_so() -> None:
    config = load_config(str(SETTINGS), env={})
    defaults = DaemonConfig()
    # The lines whose comment says they differ from the default: a server, a template, the sample specs.
    assert config.model_copy(update={"metrics": defaults.metrics, "specs": defaults.specs}) == defaults
    assert (
        config.metrics.model_copy(update={"servers": {}, "templates": {}, "default_server": None}) == defaults.metrics
    )
    assert config.specs.files == [str(Path(SETTINGS.parent / "samples"))]


def test_the_uncommenting_finds_the_commented_fields() -> None:
    text = "a:\n  b: 1   # x\n  # c: 2   # y\n  # d:\n  #   e: 3\n# Prose: not a field\n"
    assert yaml.safe_load(uncommented(text)) == {"a": {"b": 1, "c": 2, "d": {"e": 3}}}
