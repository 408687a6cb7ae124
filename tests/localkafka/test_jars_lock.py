"""A jar set is resolved once however many processes ask for it at the same time
(localkafka.jars.resolve's lock): ``./dev test`` fetches only the default version before pytest starts, so
the compatibility brokers' jars and kafka-streams are resolved by the first test that needs them, possibly
on both xdist workers at once. Maven is a stand-in here (``mvn`` on PATH, a script that records its call,
holds on until every caller has started, then writes one jar): without the lock every caller runs it and
replaces the folder under the others."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts processes

ROOT = Path(__file__).resolve().parents[2]
CALLERS = 3

FAKE_MVN = """#!{python}
import sys, time
from pathlib import Path
work = Path({work!r})
with open(work / "calls", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
# hold on until every caller has asked (each marks its start before it calls resolve): callers that are
# not kept out by the lock all get here, and each records its call
deadline = time.monotonic() + 60
while len(list(work.glob("started-*"))) < {callers} and time.monotonic() < deadline:
    time.sleep(0.02)  # poll interval of a stand-in process, not the test's synchronisation
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("-DoutputDirectory="))
(Path(out) / "kafka-clients-0.jar").write_bytes(b"jar")
"""

CALLER = """
import sys
from pathlib import Path
from localkafka.jars import resolve
work, n = Path(sys.argv[1]), sys.argv[2]
(work / f"started-{n}").touch()
target = resolve(work / "pom.xml", work / "cache" / "libs", {"kafka.version": "9.9.9"}, what="test set")
print(sorted(p.name for p in target.iterdir()))
"""


def test_callers_at_once_run_maven_once_and_all_get_the_complete_set(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(FAKE_MVN.format(python=sys.executable, work=str(tmp_path), callers=CALLERS))
    mvn.chmod(0o755)
    (tmp_path / "pom.xml").write_text("<project/>\n")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CALLER, str(tmp_path), str(n)], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(CALLERS)]
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [p.returncode for p in procs] == [0] * CALLERS, [err[-2000:] for _, err in outs]
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 1, f"Maven ran {len(calls)} times for one set: {calls}"
    assert "-Dkafka.version=9.9.9" in calls[0]
    # every caller got the whole set (the jar and the mark), none a folder replaced under it
    assert [out.strip() for out, _ in outs] == ["['.complete', 'kafka-clients-0.jar']"] * CALLERS
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["libs", "libs.lock"]
