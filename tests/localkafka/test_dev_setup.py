"""``./dev setup``'s Kafka step fetches the jars of every version the suite starts: the default one and the
compatibility tier's (localkafka.jars.COMPAT_VERSIONS), so nothing is left to download. ``./dev test``'s
fetches the default's only: pytest starts without waiting for the others, which the first test that needs
them resolves (once across workers: tests/localkafka/test_jars_lock.py). The step (its shell function, as ./dev defines it) runs with a stand-in for
the command line that records its arguments: no Maven here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from localkafka.jars import COMPAT_VERSIONS

pytestmark = pytest.mark.slow  # runs bash

ROOT = Path(__file__).resolve().parents[2]


def install_kafka(tmp_path, *args: str) -> list[str]:
    """The command lines ``install_kafka ARGS`` (./dev's function) ran, through a stand-in CLI."""
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    calls = tmp_path / "calls"
    (venv / "compaction-monitor").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (venv / "compaction-monitor").chmod(0o755)
    (venv / "python").symlink_to(sys.executable)
    script = ('eval "$(sed -n \'/^install_kafka() {/,/^}/p\' dev)"; '
              f'VENV={venv.parent}; PYTHONPATH={ROOT}; export PYTHONPATH; install_kafka {" ".join(args)}')
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return calls.read_text().splitlines()


def test_dev_setup_fetches_the_default_and_every_compatibility_version(tmp_path):
    assert install_kafka(tmp_path) == ["broker fetch", *(f"broker fetch --kafka-version {v}"
                                                         for v in COMPAT_VERSIONS)]


def test_dev_test_fetches_the_default_version_only(tmp_path):
    """``./dev test`` runs ``setup default``: the compatibility versions wait for their first test."""
    assert install_kafka(tmp_path, "default") == ["broker fetch"]
    dev = (ROOT / "dev").read_text()
    assert "    setup default\n" in dev and 'install_kafka "$@"' in dev
