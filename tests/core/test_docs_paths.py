"""Every file, module and name the docs point at exists: a doc that names a module that moved fails here.

Checked in README.md, ARCHITECTURE.md, bench/README.md and docs/*.md:
- paths into the repository (`autoscaler/kube/crd.yaml`, tests/kube/test_rbac.py, docs/snapshots/*.json),
  backticked or not, and `core/gomath.py`-style paths inside the package;
- dotted names under the package (`autoscaler.kube.leader.LeaderElector`): the longest importable module,
  then each further part as an attribute; and the names of `from autoscaler... import a, b` lines in examples;
- relative Markdown links ([ARCHITECTURE.md](ARCHITECTURE.md)), relative to the doc;
- the file names of ARCHITECTURE.md's layer listing, and the first column of a "| module |" table in a doc
  whose title names a package directory (docs/kube.md), which name files without their directory.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted([REPO / "README.md", REPO / "ARCHITECTURE.md", REPO / "bench" / "README.md", *REPO.glob("docs/*.md")])

TOP = "autoscaler|tests|docs|scripts|config|bench"
# A repository path: a top-level directory, then path characters (globs allowed); not part of a URL or a longer word.
REPO_PATH = re.compile(rf"(?<![\w./:-])(?:{TOP})/[\w./*-]*[\w*/]")
# A path inside the package without its `autoscaler/` prefix, as ARCHITECTURE.md writes them.
PACKAGE_PATH = re.compile(r"(?<![\w./:-])(?:core|spec|metrics|kube|sim)/[\w/]+\.(?:py|yaml)\b")
# A whole dotted name under the package; not an API group (autoscaler.dev/v1alpha1: a slash follows) nor a
# field path in an error message (autoscaler.spec.metrics[0]: a bracket follows).
DOTTED = re.compile(r"(?<![\w./-])autoscaler(?:\.[A-Za-z_]\w*)+(?![\w/\[]|\.\w)")
FROM_IMPORT = re.compile(r"^\s*from (autoscaler[\w.]*) import \(?([\w, ]+)\)?\s*$", flags=re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Dotted names in the docs that are not Python names: the CRD's API group and the plugins' entry-point group.
NOT_MODULES = {"autoscaler.dev", "autoscaler.metric_sources"}


# Paths the tools create (bench/results/): named in the docs, ignored by git, absent from a fresh clone.
GENERATED = tuple(
    line.strip() for line in (REPO / ".gitignore").read_text().splitlines() if "/" in line and line[:1] not in "*#"
)


def _path_exists(text: str) -> bool:
    text = text.rstrip(".")
    if text.startswith(GENERATED):
        return True
    if "*" in text:
        return any(REPO.glob(text))
    return (REPO / text).exists()


def _dotted_exists(name: str) -> bool:
    parts = name.split(".")
    value: object = importlib.import_module(parts[0])
    taken = 1
    # Import as deep as the name goes through packages, then read the rest as attributes.
    while taken < len(parts) and hasattr(value, "__path__"):
        module_name = ".".join(parts[: taken + 1])
        if importlib.util.find_spec(module_name) is None:
            break
        value = importlib.import_module(module_name)
        taken += 1
    for attribute in parts[taken:]:
        if not hasattr(value, attribute):
            return False
        value = getattr(value, attribute)
    return True


def stale_references(text: str, *, base: Path) -> list[str]:
    """What a doc's text names that does not exist, as "kind: name" lines; links resolve from `base`."""
    stale = [f"path: {p}" for p in REPO_PATH.findall(text) if not _path_exists(p)]
    stale += [f"path: autoscaler/{p}" for p in PACKAGE_PATH.findall(text) if not _path_exists(f"autoscaler/{p}")]
    stale += [f"name: {n}" for n in DOTTED.findall(text) if n not in NOT_MODULES and not _dotted_exists(n)]
    for module, names in FROM_IMPORT.findall(text):
        for name in filter(None, (n.split(" as ")[0].strip() for n in names.split(","))):
            if not _dotted_exists(f"{module}.{name}"):
                stale.append(f"name: {module}.{name}")
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        path = target.split("#")[0]
        if not (base / path).exists():
            stale.append(f"link: {target}")
    return stale


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_docs_name_only_what_exists(doc: Path) -> None:
    assert stale_references(doc.read_text(), base=doc.parent) == []


def test_architecture_lists_existing_files() -> None:
    """Each `name.py` and `name/` under a directory of the layer listing exists in that directory."""
    listing = (REPO / "ARCHITECTURE.md").read_text().split("## Layers", 1)[1].split("```")[1]
    stale, directory = [], REPO / "autoscaler"
    for line in listing.strip().splitlines()[1:]:
        if entry := re.match(r"^  ([\w.]+?)(/|\.py)\s", line):  # a new entry: a subpackage or a module
            name, kind = entry.groups()
            directory = REPO / "autoscaler" / name if kind == "/" else REPO / "autoscaler"
            line = line[entry.end() :]
            if not (REPO / "autoscaler" / (name + kind)).exists():
                stale.append(f"autoscaler/{name}{kind}")
        for name in re.findall(r"(?<![\w/.])(\w+\.py|\w+/)(?![\w.])", line):
            if not (directory / name).exists():
                stale.append(str((directory / name).relative_to(REPO)))
    assert stale == []


def test_module_tables_name_existing_modules() -> None:
    """A doc titled after a package directory lists in its "| module |" table only what that directory holds."""
    stale = []
    for doc in DOCS:
        text = doc.read_text()
        title = re.match(r"# .*?`(autoscaler/[\w/]+?)/?`", text)
        if title is None:
            continue
        for table in re.findall(r"^\| module \|.*?\n((?:\|.*\n)+)", text, flags=re.M):
            for name in re.findall(r"^\| `([\w.]+)` \|", table, flags=re.M):
                path = REPO / title[1] / name
                if not (path.exists() or path.with_suffix(".py").exists()):
                    stale.append(f"{doc.name}: {title[1]}/{name}")
    assert stale == []


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        pytest.param("`autoscaler/kube/crd.yaml`", [], id="an existing file"),
        pytest.param("`autoscaler/kube/selector.py`", ["path: autoscaler/kube/selector.py"], id="a missing file"),
        pytest.param("see tests/core/test_nothing.py.", ["path: tests/core/test_nothing.py"], id="a bare path"),
        pytest.param("`docs/snapshots/*.json`", [], id="a glob with matches"),
        pytest.param("core/quantity.py (quantities)", ["path: autoscaler/core/quantity.py"], id="a package path"),
        pytest.param("`autoscaler.kube.leader.LeaderElector`", [], id="a class"),
        pytest.param("`autoscaler.kube.selector`", ["name: autoscaler.kube.selector"], id="a missing module"),
        pytest.param(
            "`autoscaler.core.labels.Selector.empty`",
            ["name: autoscaler.core.labels.Selector.empty"],
            id="a missing attribute",
        ),
        pytest.param("`autoscaler.dev/v1alpha1`, `autoscaler.metric_sources`", [], id="groups, not modules"),
        pytest.param("`autoscaler.spec.metrics[0].resource: bad`", [], id="a field path in a message"),
        pytest.param("through autoscaler.kube.selector.", ["name: autoscaler.kube.selector"], id="end of a sentence"),
        pytest.param("https://docs.example/x and [a](#anchor)", [], id="URLs and anchors"),
        pytest.param(
            "```python\nfrom autoscaler.metrics import Answer, Nope\nfrom autoscaler.core import labels\n```",
            ["name: autoscaler.metrics.Nope"],
            id="names imported in an example",
        ),
        pytest.param(
            "[the CRD](autoscaler/kube/crd.yml)",
            ["path: autoscaler/kube/crd.yml", "link: autoscaler/kube/crd.yml"],
            id="a broken link",
        ),
    ],
)
def test_the_check_finds_stale_references(text: str, stale: list[str]) -> None:
    """The checker itself, on one-line documents at the repository root: it flags what is missing, nothing else."""
    assert stale_references(text, base=REPO) == stale
