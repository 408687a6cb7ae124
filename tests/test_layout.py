"""Guards on the project's shape: the pure core stays pure, the Dockerfile copies what exists."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_CORE = {"pyspark", "streamlit", "plotly", "prometheus_client", "confluent_kafka", "requests",
                     "collectors", "spark_analysis", "dashboards"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_core_imports_no_edge():
    """monitor/ (but its command line, which wires the edges lazily) imports no Spark, Streamlit,
    network client or edge package."""
    for path in (ROOT / "monitor").rglob("*.py"):
        if path.name.startswith("cli"):  # the command line wires the edges together
            continue
        bad = _imports(path) & FORBIDDEN_IN_CORE
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_cli_imports_edges_lazily():
    tree = ast.parse((ROOT / "monitor" / "cli.py").read_text())
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module.split(".")[0])
    assert not top & (FORBIDDEN_IN_CORE | {"monitor"}), top


def test_dockerfile_copies_existing_paths():
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln.strip() for ln in re.sub(r"\\\n", " ", text).splitlines()]
    copies = [ln for ln in lines if ln.upper().startswith(("COPY ", "ADD "))]
    assert copies, "the Dockerfile copies nothing"
    for ln in copies:
        args = [a for a in shlex.split(ln)[1:] if not a.startswith("--")]
        for src in args[:-1]:
            assert (ROOT / src).exists(), f"Dockerfile copies {src}, which does not exist"
    assert re.search(r"^USER\s+(?!root)\S+", text, re.M), "the image must run as a non-root user"
    assert re.search(r"^HEALTHCHECK\s", text, re.M)
    assert re.search(r'^CMD\s.*"collect"', text, re.M), "default command runs `compaction-monitor collect`"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./dev test" in readme and "./dev test" in ci
    assert "./dev demo" in readme


def test_readme_lists_every_exported_metric():
    from collectors.metrics import METRICS

    readme = (ROOT / "README.md").read_text()
    for name, (kind, _, _) in METRICS.items():
        full = name + ("_total" if kind == "counter" else "")
        assert f"`{full}`" in readme, f"README does not document {full}"
