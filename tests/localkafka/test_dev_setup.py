"""``./dev setup``'s Kafka step fetches the jars of every version the suite starts: the default one and the
compatibility tier's (localkafka.jars.COMPAT_VERSIONS), so ``./dev test compat`` never resolves jars with
Maven in the middle of a run. The step (its shell function, as ./dev defines it) runs with a stand-in for
the command line that records its arguments: no Maven here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from localkafka.jars import COMPAT_VERSIONS

pytestmark = pytest.mark.slow  # runs bash

ROOT = Path(__file__).resolve().parents[2]


def test_dev_setup_fetches_the_default_and_every_compatibility_version(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    calls = tmp_path / "calls"
    (venv / "compaction-monitor").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (venv / "compaction-monitor").chmod(0o755)
    (venv / "python").symlink_to(sys.executable)
    script = ('eval "$(sed -n \'/^install_kafka() {/,/^}/p\' dev)"; '
              f'VENV={venv.parent}; PYTHONPATH={ROOT}; export PYTHONPATH; install_kafka')
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert calls.read_text().splitlines() == ["broker fetch", *(f"broker fetch --kafka-version {v}"
                                                                for v in COMPAT_VERSIONS)]
