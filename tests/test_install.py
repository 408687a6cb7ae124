"""A plain ``pip install .`` in a fresh venv: the declared core dependencies suffice for the collector.

The project's files are copied to a temporary folder (pip builds in the source tree: the worktree stays
untouched) and installed with pip as a user runs it, through the same index and pip configuration as
``./dev`` (PyPI, and pip's local cache when warm): every dependency comes from pyproject.toml's own
declaration, none from this venv. Then, with no PYTHONPATH and the venv's own entry point:
no PySpark, Streamlit, pandas, pyarrow or plotly is installed; ``collect --once`` against the session
broker exits 0 with this test's topic among its series, and ``logdir`` and ``inspect`` read its
partition; ``audit`` says which extra to install.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kafkatools import compacted, create_topic, partition_dir, unique_topic, write_rounds
from pyproject_deps import PYPROJECT, ROOT, normalize

pytestmark = pytest.mark.slow

HEAVY = {"pyspark", "streamlit", "pandas", "pyarrow", "plotly", "numpy"}


def _copy_project(dst: Path) -> Path:
    """The files a wheel is built from: pyproject.toml's packages, setup.py (the C decoder), the README."""
    packages = [p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dst / name)
    for package in packages:
        shutil.copytree(ROOT / package, dst / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    return dst


@pytest.fixture(scope="module")
def slim_venv(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("slim-install")
    (base / "src").mkdir()
    src = _copy_project(base / "src")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    # -v: pip shows the build backend's output (setuptools' warnings, the C compiler's) only when verbose
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-v", str(src)],
                       capture_output=True, text=True, timeout=540, env=env, cwd=base)
    assert r.returncode == 0, f"pip install . failed:\n{r.stdout[-5000:]}\n{r.stderr}"
    (base / "install.log").write_text(r.stdout + r.stderr)
    return venv


def _run(venv: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=venv.parent)


# pip's own choices, said by setuptools about how pip runs it: not about this project
NOT_OURS = ("byte-compiling is disabled",)


def warnings_in(log: str) -> list[str]:
    """The lines of a verbose ``pip install`` that warn: Python warnings (``...Warning:``), setuptools'
    and the C compiler's ``warning:``, pip's ``WARNING:`` and ``DEPRECATION:``."""
    pattern = re.compile(r"\w*Warning\b:|\bwarning:|^\s*WARNING:|^\s*DEPRECATION:")
    return [ln.strip() for ln in log.splitlines() if pattern.search(ln) and not any(n in ln for n in NOT_OURS)]


def test_warnings_in_finds_the_shapes_an_install_prints():
    log = """  /tmp/x/setuptools/config/_apply_pyprojecttoml.py:82: SetuptoolsDeprecationWarning: `project.license` as a TOML table is deprecated
  monitor/kafka/record/_decode.c:105:91: warning: 'hv' may be used uninitialized [-Wmaybe-uninitialized]
  warning: build_py: byte-compiling is disabled, skipping.
  running egg_info
DEPRECATION: Building 'x' using the legacy setup.py bdist_wheel mechanism
"""
    assert [w.split(":")[0] for w in warnings_in(log)] == ["/tmp/x/setuptools/config/_apply_pyprojecttoml.py",
                                                           "monitor/kafka/record/_decode.c", "DEPRECATION"]


def test_a_plain_install_prints_no_warning_of_ours(slim_venv):
    """setuptools' deprecations (the license field, PEP 639), the C decoder's compiler warnings, pip's."""
    assert warnings_in((slim_venv.parent / "install.log").read_text()) == []


def test_the_editable_install_of_dev_prints_no_warning_of_ours(tmp_path):
    """``./dev``'s own install line (editable, its options read from the script), dependencies left out:
    setuptools' editable-install warnings ("Editable installation ... folders with the same name") are
    printed by that step on every fresh set-up unless its mode says how."""
    line = next(x for x in (ROOT / "dev").read_text().splitlines()
                if "pip\" install" in x and " -e " in x and not x.lstrip().startswith("#"))
    settings = [a for v in re.findall(r"--config-settings[= ](\S+)", line) for a in ("--config-settings", v)]
    (tmp_path / "src").mkdir()
    src = _copy_project(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-v", "--no-deps", "-e", str(src),
                        *settings], capture_output=True, text=True, timeout=540, env=env, cwd=tmp_path)
    assert r.returncode == 0, f"pip install -e failed:\n{r.stdout[-5000:]}\n{r.stderr}"
    log = r.stdout + r.stderr
    assert warnings_in(log) == [], warnings_in(log)
    assert "Editable installation" not in log


def test_a_plain_install_has_no_spark_no_streamlit(slim_venv):
    r = _run(slim_venv, str(slim_venv / "bin" / "python"), "-m", "pip", "list", "--format", "json")
    installed = {normalize(p["name"]) for p in json.loads(r.stdout)}
    assert normalize(PYPROJECT["project"]["name"]) in installed
    assert not installed & HEAVY, sorted(installed & HEAVY)
    # the entry point imports the installed copy, not this worktree
    r = _run(slim_venv, str(slim_venv / "bin" / "python"), "-c", "import collectors, cli; print(collectors.__file__)")
    assert r.returncode == 0 and Path(r.stdout.strip()).is_relative_to(slim_venv), (r.stdout, r.stderr)


def test_a_plain_install_collects_from_the_broker(slim_venv, kafka):
    t = create_topic(kafka.bootstrap, unique_topic("slim"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    write_rounds(kafka.bootstrap, t, 1)  # one rolled segment, never cleaned: cleanable ratio 1
    r = _run(slim_venv, str(slim_venv / "bin" / "compaction-monitor"), "collect", "--once", "--bootstrap-servers",
             kafka.bootstrap, "--jmx-url", kafka.jmx_url, "--log-dir", kafka.log_dir)
    # 1 only for a partition's fault (as logdir's below: the log dir is every test's), never a source's
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and " failed: " not in r.stderr, r.stderr
    assert not [x for x in r.stderr.splitlines() if x.startswith(f"{t}-")], r.stderr
    assert r.returncode == 0 or re.search(r"^\S+-\d+: ", r.stderr, re.M), r.stderr  # the partition named
    assert 'kafka_compaction_source_up{cluster="default",kind="jmx",source="jmx:default:1"} 1.0' in r.stdout
    line = next(x for x in r.stdout.splitlines()
                if x.startswith("kafka_compaction_partition_cleanable_ratio{") and f'topic="{t}"' in x)
    assert line.endswith(" 1.0"), line
    # the file tools too: logdir over the broker's log dir, inspect of the partition's first segment
    r = _run(slim_venv, str(slim_venv / "bin" / "compaction-monitor"), "logdir", "--format", "json", kafka.log_dir,
             "--topic-config", f"{t}:cleanup.policy=compact")  # no admin API here: say it is compacted
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr  # 1: other tests' faults in the dir
    assert [row["partition"] for row in json.loads(r.stdout) if row["topic"] == t] == [0]
    first = partition_dir(kafka.log_dir, t) / f"{0:020d}.log"
    r = _run(slim_venv, str(slim_venv / "bin" / "compaction-monitor"), "inspect", "--format", "jsonl", str(first))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [base64.b64decode(x["key"]) for x in rows] == [f"k{i}".encode() for i in range(200)]  # write_rounds' round 0


def test_a_plain_install_names_the_extra_the_audit_needs(slim_venv, tmp_path):
    r = _run(slim_venv, str(slim_venv / "bin" / "compaction-monitor"), "audit", "--input", str(tmp_path),
             "--out", str(tmp_path / "out"))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == [
        "compaction-monitor: audit needs the [audit] extra (pyspark, pyarrow, numpy, pandas, plotly not installed): "
        "from a clone of the project: pip install '.[audit]' (or, with the wheel `pip wheel --no-deps .` builds "
        "there: pip install './kafka_compaction_monitor-<version>-<tags>.whl[audit]')"]
